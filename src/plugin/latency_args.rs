//! The latency arguments `LatencyDistance`, `CapacityPressure` and the `MaxLatency` filter
//! share: where latencies come from (`matrix`, `matrixFile`, `useRegionConfigMaps`), the latency
//! scale (`maxLatencyMs`) and the fallback (`fallbackFactor`). They are read and checked here
//! once, beside the plugin's own arguments in the same mapping ([`OwnArgs`]), so that every
//! plugin spells, defaults and reports them alike.
//!
//! Serde's `flatten` would lose the field path of a value's error and the list of accepted keys
//! in an unknown key's message, so the mapping is read key by key as the derive reads it: an
//! unknown key, a value of the wrong type and its path read exactly as with a derived struct.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::latency_sources::sources_from_args;
use crate::field_error::{
    FieldError, MAX_FALLBACK_FACTOR, MAX_LATENCY_MS, bounded_non_negative, bounded_positive,
};
use crate::snapshot::estimate::LatencySources;

/// `maxLatencyMs` when a plugin that has a default is not given one.
pub const DEFAULT_MAX_LATENCY_MS: f64 = 300.0;
/// `fallbackFactor` when not given.
pub const DEFAULT_FALLBACK_FACTOR: f64 = 10.0;

/// The latency keys, for a plugin's [`OwnArgs::FIELDS`].
pub mod keys {
    pub const MATRIX: &str = "matrix";
    pub const MATRIX_FILE: &str = "matrixFile";
    pub const USE_REGION_CONFIG_MAPS: &str = "useRegionConfigMaps";
    pub const MAX_LATENCY_MS: &str = "maxLatencyMs";
    pub const FALLBACK_FACTOR: &str = "fallbackFactor";
}

use keys::{
    FALLBACK_FACTOR, MATRIX, MATRIX_FILE, MAX_LATENCY_MS as MAX_LATENCY, USE_REGION_CONFIG_MAPS,
};

/// A plugin's arguments besides the latency ones, read from the same mapping.
pub trait OwnArgs: Default {
    /// Every key the plugin accepts, the latency keys it takes included, in the order an
    /// unknown key's message lists them. A latency key missing here is unknown to the plugin.
    const FIELDS: &'static [&'static str];
    /// `maxLatencyMs` when absent; `None` makes the key required.
    const MAX_LATENCY_MS: Option<f64> = Some(DEFAULT_MAX_LATENCY_MS);

    /// Reads the value of one of the plugin's own keys (one in [`OwnArgs::FIELDS`] that is no
    /// latency key); `Ok(false)` for a key it does not have.
    fn read<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error>;
}

/// No arguments besides the latency ones.
#[derive(Default)]
pub struct NoOwnArgs;

/// The latency arguments of a plugin, as given, with the plugin's own ones in `own`. Parse it
/// with [`crate::plugin::parse_args`], then read each value through its check.
pub struct LatencyArgs<E> {
    matrix: Option<serde_json::Value>,
    matrix_file: Option<String>,
    use_region_config_maps: bool,
    max_latency_ms: Option<f64>,
    fallback_factor: f64,
    pub own: E,
}

impl<E: OwnArgs> Default for LatencyArgs<E> {
    fn default() -> Self {
        Self {
            matrix: None,
            matrix_file: None,
            use_region_config_maps: true,
            max_latency_ms: E::MAX_LATENCY_MS,
            fallback_factor: DEFAULT_FALLBACK_FACTOR,
            own: E::default(),
        }
    }
}

impl<E> LatencyArgs<E> {
    /// `maxLatencyMs`: positive and at most [`MAX_LATENCY_MS`]; a required one that is absent
    /// is reported (and read as 0).
    pub fn max_latency_ms(&self, path: &str, errors: &mut Vec<FieldError>) -> f64 {
        let at = format!("{path}.{MAX_LATENCY}");
        match self.max_latency_ms {
            Some(ms) => {
                errors.extend(bounded_positive(at, ms, MAX_LATENCY_MS));
                ms
            }
            None => {
                errors.push(FieldError::new(at, "is required"));
                0.0
            }
        }
    }

    /// `fallbackFactor`: from 0 to [`MAX_FALLBACK_FACTOR`].
    pub fn fallback_factor(&self, path: &str, errors: &mut Vec<FieldError>) -> f64 {
        errors.extend(bounded_non_negative(
            format!("{path}.{FALLBACK_FACTOR}"),
            self.fallback_factor,
            MAX_FALLBACK_FACTOR,
        ));
        self.fallback_factor
    }

    /// The latency sources: the matrix (given inline or as a file, read now) and whether the
    /// region ConfigMaps count; the matrix's problems are appended to `errors`.
    pub fn sources(&self, path: &str, errors: &mut Vec<FieldError>) -> LatencySources {
        sources_from_args(
            self.matrix.as_ref(),
            self.matrix_file.as_deref(),
            self.use_region_config_maps,
            path,
            errors,
        )
    }
}

impl OwnArgs for NoOwnArgs {
    const FIELDS: &'static [&'static str] = &[
        MATRIX,
        MATRIX_FILE,
        MAX_LATENCY,
        FALLBACK_FACTOR,
        USE_REGION_CONFIG_MAPS,
    ];

    fn read<'de, A: MapAccess<'de>>(&mut self, _: &str, _: &mut A) -> Result<bool, A::Error> {
        Ok(false)
    }
}

impl<'de, E: OwnArgs> Deserialize<'de> for LatencyArgs<E> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("Args", E::FIELDS, ArgsVisitor(PhantomData))
    }
}

struct ArgsVisitor<E>(PhantomData<E>);

impl<'de, E: OwnArgs> Visitor<'de> for ArgsVisitor<E> {
    type Value = LatencyArgs<E>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct Args")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut args = LatencyArgs::<E>::default();
        while let Some(key) = map.next_key_seed(Key(E::FIELDS))? {
            match key {
                MATRIX => args.matrix = map.next_value()?,
                MATRIX_FILE => args.matrix_file = map.next_value()?,
                USE_REGION_CONFIG_MAPS => args.use_region_config_maps = map.next_value()?,
                // With a default the key takes a number, as an `f64` field; without, `null`
                // is as good as absent, as an `Option<f64>` field.
                MAX_LATENCY if E::MAX_LATENCY_MS.is_some() => {
                    args.max_latency_ms = Some(map.next_value()?)
                }
                MAX_LATENCY => args.max_latency_ms = map.next_value()?,
                FALLBACK_FACTOR => args.fallback_factor = map.next_value()?,
                own => {
                    if !args.own.read(own, &mut map)? {
                        return Err(de::Error::unknown_field(own, E::FIELDS));
                    }
                }
            }
        }
        Ok(args)
    }
}

/// Reads a key as a derived struct reads its field names: one of `fields`, or an unknown-field
/// error that lists them.
struct Key(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Key {
    type Value = &'static str;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = &'static str;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.0
            .iter()
            .find(|f| **f == v)
            .copied()
            .ok_or_else(|| E::unknown_field(v, self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::parse_args;

    /// A plugin that takes no `fallbackFactor`, requires `maxLatencyMs` and has a key of its
    /// own.
    #[derive(Default)]
    struct Own {
        strict: bool,
    }

    impl OwnArgs for Own {
        const FIELDS: &'static [&'static str] = &[MAX_LATENCY, MATRIX, "strict"];
        const MAX_LATENCY_MS: Option<f64> = None;

        fn read<'de, A: MapAccess<'de>>(
            &mut self,
            key: &str,
            map: &mut A,
        ) -> Result<bool, A::Error> {
            match key {
                "strict" => self.strict = map.next_value()?,
                _ => return Ok(false),
            }
            Ok(true)
        }
    }

    fn errors<E: OwnArgs>(args: serde_json::Value) -> Vec<String> {
        let mut errors = Vec::new();
        match parse_args::<LatencyArgs<E>>(&args, "p.args") {
            Ok(a) => {
                a.max_latency_ms("p.args", &mut errors);
                a.sources("p.args", &mut errors);
            }
            Err(e) => errors = e,
        }
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn absent_keys_take_the_defaults() {
        let a: LatencyArgs<NoOwnArgs> = parse_args(&serde_json::Value::Null, "p").unwrap();
        let mut errors = Vec::new();
        assert_eq!(a.max_latency_ms("p", &mut errors), DEFAULT_MAX_LATENCY_MS);
        assert_eq!(a.fallback_factor("p", &mut errors), DEFAULT_FALLBACK_FACTOR);
        let sources = a.sources("p", &mut errors);
        assert!(sources.use_region_config_maps && sources.matrix.is_none());
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn own_keys_are_read_beside_the_latency_ones() {
        let a: LatencyArgs<Own> = parse_args(
            &serde_json::json!({"maxLatencyMs": 20, "strict": true}),
            "p",
        )
        .unwrap();
        assert!(a.own.strict);
        assert_eq!(a.max_latency_ms("p", &mut Vec::new()), 20.0);
    }

    #[test]
    fn a_latency_key_the_plugin_does_not_list_is_unknown_and_the_message_lists_its_keys() {
        assert_eq!(
            errors::<Own>(serde_json::json!({"maxLatencyMs": 20, "fallbackFactor": 2})),
            [
                "p.args.fallbackFactor: unknown field `fallbackFactor`, expected one of `maxLatencyMs`, `matrix`, `strict`"
            ]
        );
    }

    #[test]
    fn a_required_max_latency_is_reported_absent_or_null_and_a_wrong_type_at_its_path() {
        let required = ["p.args.maxLatencyMs: is required"];
        assert_eq!(errors::<Own>(serde_json::Value::Null), required);
        assert_eq!(
            errors::<Own>(serde_json::json!({"maxLatencyMs": null})),
            required
        );
        assert_eq!(
            errors::<NoOwnArgs>(serde_json::json!({"maxLatencyMs": null})),
            ["p.args.maxLatencyMs: must be a number, got null"]
        );
        assert_eq!(
            errors::<Own>(serde_json::json!({"maxLatencyMs": 5, "strict": "yes"})),
            ["p.args.strict: must be true or false, got text \"yes\""]
        );
    }
}
