use std::path::{Path, PathBuf};

use config::{Config, Environment};
use serde_json::{Map, Value};

use super::defaults::set_defaults;
use super::types::SchedulerConfiguration;
use super::validate::validate;
use crate::bom::strip_bom;
use crate::field_error::FieldError;

const DEFAULTS: &str = include_str!("../../config/defaults.yaml");
/// Config files larger than this are refused.
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;
/// Environment variables with this prefix override config keys (`__` separates levels).
pub const ENV_PREFIX: &str = "GARDENER_SCHEDULER";
/// The name errors use for text given without a file (tests, `load_str`).
const NO_FILE: &str = "<config>";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: crate::input::ReadError,
    },
    #[error("parsing config: {0}")]
    Parse(#[from] config::ConfigError),
    #[error("invalid config:\n{}", render(.0))]
    Invalid(Vec<FieldError>),
}

fn render(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(|e| format!("  {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// How keys the configuration does not know are treated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnknownKeys {
    /// As upstream: ignored, each reported as a warning (`--strict` off).
    #[default]
    Warn,
    /// Each one is an error (`--strict`).
    Reject,
}

/// A read and defaulted configuration, with what was ignored on the way and the problems
/// validation found. Not yet usable: [`crate::compile`] adds the problems of its profiles and
/// refuses the configuration when there are any, all reported together.
#[derive(Clone, Debug)]
pub struct Draft {
    pub config: SchedulerConfiguration,
    /// One entry per ignored key, with its field path (empty under [`UnknownKeys::Reject`]).
    pub warnings: Vec<FieldError>,
    /// Unknown keys under [`UnknownKeys::Reject`], then every semantic problem, in field order.
    pub problems: Vec<FieldError>,
}

/// The message of an ignored key, as a warning or, under `--strict`, as an error.
pub const UNKNOWN_KEY: &str = "unknown field, ignored (an error with --strict)";

/// Reads defaults, then `path` (if any), then the environment; validates every section.
/// Warnings are returned, not logged. A file that cannot be read or parsed is an error; the
/// problems of a parsed configuration are in [`Draft::problems`].
pub fn read_with(path: Option<&Path>, unknown: UnknownKeys) -> Result<Draft, ConfigError> {
    let file = match path {
        Some(p) => Some((read_config_file(p)?, p.display().to_string())),
        None => None,
    };
    let (vars, env_notes) = env_vars(std::env::vars())?;
    let env = Environment::with_prefix(ENV_PREFIX)
        .prefix_separator("_")
        .separator("__")
        .convert_case(config::Case::Camel)
        .try_parsing(true)
        .source(Some(vars));
    let env: Value = Config::builder()
        .add_source(env)
        .build()?
        .try_deserialize()?;
    let mut loaded = build(
        file.as_ref()
            .map(|(text, name)| (text.as_str(), name.as_str())),
        Some(env),
        unknown,
    )?;
    match unknown {
        UnknownKeys::Warn => loaded.warnings.extend(env_notes),
        UnknownKeys::Reject => loaded.problems.splice(0..0, env_notes).for_each(drop),
    }
    if let Ok(kubeconfig) = std::env::var("KUBECONFIG")
        && !kubeconfig.is_empty()
    {
        loaded.config.client_connection.kubeconfig = kubeconfig;
    }
    Ok(loaded)
}

/// The environment variables that override keys, checked before the `config` crate reads them:
/// a number that is not finite (`NaN`, `inf`, `1e400`) is an error naming the variable (it
/// would reach the configuration as null), and a name with three underscores in a row is left
/// out with a note (levels are separated by exactly two).
pub(super) fn env_vars(
    vars: impl Iterator<Item = (String, String)>,
) -> Result<(config::Map<String, String>, Vec<FieldError>), ConfigError> {
    let prefix = format!("{ENV_PREFIX}_");
    let mut kept = config::Map::new();
    let (mut notes, mut errors) = (Vec::new(), Vec::new());
    for (name, value) in vars {
        if !name.starts_with(&prefix) {
            continue;
        }
        if name[prefix.len()..].contains("___") {
            notes.push(FieldError::new(
                name,
                "three underscores in a row: levels are separated by two (`__`); ignored",
            ));
            continue;
        }
        if value.trim().parse::<f64>().is_ok_and(|v| !v.is_finite()) {
            errors.push(FieldError::new(
                name,
                format!("{value:?} is not a finite number"),
            ));
            continue;
        }
        kept.insert(name, value);
    }
    if errors.is_empty() {
        Ok((kept, notes))
    } else {
        Err(ConfigError::Invalid(errors))
    }
}

/// serde's message in the words of the field's rule ([`crate::field_error::serde_message`]),
/// and for a number written beyond the range of a double (`1e400`), which the YAML reader keeps
/// as text, what it is.
fn number_message(message: String) -> String {
    let Some(rest) = message.strip_prefix("invalid type: string \"") else {
        return crate::field_error::serde_message(&message);
    };
    let Some((text, _)) = rest.split_once('"') else {
        return crate::field_error::serde_message(&message);
    };
    let numeric = text
        .trim_start_matches(['+', '-'])
        .starts_with(|c: char| c.is_ascii_digit() || c == '.');
    if numeric && text.parse::<f64>().is_ok_and(f64::is_infinite) {
        format!("{text} is beyond the largest number accepted (about 1.8e308)")
    } else {
        crate::field_error::serde_message(&message)
    }
}

/// The config file's text: a regular file of at most [`MAX_CONFIG_BYTES`], UTF-8, flow
/// nesting checked before any parser sees it.
fn read_config_file(path: &Path) -> Result<String, ConfigError> {
    use crate::input::{self, ReadError};
    let err = |source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let bytes = input::read_bytes(path, MAX_CONFIG_BYTES).map_err(err)?;
    let text = String::from_utf8(bytes).map_err(|e| err(ReadError::NotUtf8(e.utf8_error())))?;
    input::check_nesting(&text)
        .map_err(|e| err(ReadError::Io(std::io::Error::other(e.to_string()))))?;
    Ok(text)
}

/// [`read_with`] for the given YAML text, without the environment (tests, `simulate`).
pub fn read_str_with(yaml: &str, unknown: UnknownKeys) -> Result<Draft, ConfigError> {
    build(Some((yaml, NO_FILE)), None, unknown)
}

fn build(
    file: Option<(&str, &str)>,
    env: Option<Value>,
    unknown: UnknownKeys,
) -> Result<Draft, ConfigError> {
    let mut merged = yaml_to_json(DEFAULTS, "config/defaults.yaml")
        .expect("the embedded defaults are valid YAML");
    let mut sections = Vec::new();
    if let Some((text, name)) = file {
        let text = strip_bom(text);
        if !text.trim().is_empty() {
            merge(&mut merged, yaml_to_json(text, name)?, "", &mut sections)?;
        }
    }
    if let Some(env) = env {
        merge(&mut merged, env, "", &mut sections)?;
    }

    // Deserialize section by section so that a type error in one section does not hide the
    // errors of the others.
    let mut errors = Vec::new();
    if let Value::Object(map) = &merged {
        for (key, value) in map {
            let single = serde_json::json!({ key.clone(): value.clone() });
            if let Err(e) = serde_path_to_error::deserialize::<_, SchedulerConfiguration>(single) {
                let path = e.path().to_string();
                let path = if path == "." { key.clone() } else { path };
                errors.push(FieldError::new(
                    path,
                    number_message(e.into_inner().to_string()),
                ));
            }
        }
    }
    if !errors.is_empty() {
        return Err(ConfigError::Invalid(errors));
    }
    let mut ignored = Vec::new();
    let mut note = |path: serde_ignored::Path| {
        ignored.push(FieldError::new(render_path(&path), UNKNOWN_KEY));
    };
    let tracking = serde_ignored::Deserializer::new(merged, &mut note);
    let mut cfg: SchedulerConfiguration =
        serde_path_to_error::deserialize(tracking).map_err(|e| {
            ConfigError::Invalid(vec![FieldError::new(
                e.path().to_string(),
                number_message(e.into_inner().to_string()),
            )])
        })?;
    set_defaults(&mut cfg);
    let mut problems = Vec::new();
    let mut warnings = match unknown {
        UnknownKeys::Warn => ignored,
        UnknownKeys::Reject => {
            problems = ignored;
            Vec::new()
        }
    };
    warnings.extend(super::validate::notes(&cfg));
    problems.extend(validate(&cfg));
    Ok(Draft {
        config: cfg,
        warnings,
        problems,
    })
}

/// `schedulers.shoot.priorities[0].wieght`, as the other field paths are written.
fn render_path(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", render_path(parent)),
        Path::Map { parent, key } => {
            let parent = render_path(parent);
            if parent.is_empty() {
                key.clone()
            } else {
                format!("{parent}.{key}")
            }
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => render_path(parent),
    }
}

/// Reads YAML into a JSON tree as upstream's decoder sees it: mappings, lists and scalars, with
/// `null` meaning "not set". Numbers JSON cannot hold (`.nan`, `.inf`, `1e309`) are errors
/// naming their field, not silently null.
fn yaml_to_json(text: &str, source: &str) -> Result<Value, ConfigError> {
    let mut doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(|e| {
        let note = crate::bom::note_inside(text).unwrap_or_default();
        let message = crate::input::yaml_message(&e);
        ConfigError::Invalid(vec![FieldError::new(source, format!("{message}{note}"))])
    })?;
    // Merge keys (`<<: *anchor`) as Go's YAML reader applies them: the mapping's own keys win.
    doc.apply_merge().map_err(|e| {
        ConfigError::Invalid(vec![FieldError::new(
            source,
            format!("merge key (<<): {e}"),
        )])
    })?;
    if !(doc.is_mapping() || doc.is_null()) {
        return Err(ConfigError::Invalid(vec![FieldError::new(
            source,
            "the configuration must be a YAML mapping",
        )]));
    }
    let mut errors = Vec::new();
    let json = convert(doc, "", &mut errors);
    if errors.is_empty() {
        Ok(json.unwrap_or(Value::Object(Map::new())))
    } else {
        Err(ConfigError::Invalid(errors))
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `None` for null, which the merge treats as absent.
fn convert(v: serde_yaml_ng::Value, path: &str, errors: &mut Vec<FieldError>) -> Option<Value> {
    use serde_yaml_ng::Value as Y;
    match v {
        Y::Null => None,
        Y::Bool(b) => Some(Value::Bool(b)),
        Y::String(s) => Some(Value::String(s)),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(Value::from(i))
            } else if let Some(u) = n.as_u64() {
                Some(Value::from(u))
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                match serde_json::Number::from_f64(f) {
                    Some(n) => Some(Value::Number(n)),
                    None => {
                        errors.push(FieldError::new(
                            path,
                            format!(
                                "{n} is not a finite number (.nan, .inf and numbers beyond about \
                                 1.8e308 are not accepted; quote text that looks like a number)"
                            ),
                        ));
                        None
                    }
                }
            }
        }
        Y::Sequence(items) => Some(Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| {
                    convert(item, &format!("{path}[{i}]"), errors).unwrap_or(Value::Null)
                })
                .collect(),
        )),
        Y::Mapping(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let key = match k {
                    Y::String(s) => s,
                    Y::Bool(b) => b.to_string(),
                    Y::Number(n) => n.to_string(),
                    other => {
                        errors.push(FieldError::new(
                            path,
                            format!("a key must be text, got {}", describe(&other)),
                        ));
                        continue;
                    }
                };
                let p = child(path, &key);
                if let Some(v) = convert(v, &p, errors) {
                    out.insert(key, v);
                }
            }
            Some(Value::Object(out))
        }
        Y::Tagged(t) => {
            errors.push(FieldError::new(
                path,
                format!(
                    "the tag {} is not supported (YAML tags such as !Ref are not resolved); \
                     write the value itself",
                    t.tag
                ),
            ));
            None
        }
    }
}

fn describe(v: &serde_yaml_ng::Value) -> &'static str {
    use serde_yaml_ng::Value as Y;
    match v {
        Y::Null => "null",
        Y::Bool(_) => "a boolean",
        Y::Number(_) => "a number",
        Y::String(_) => "text",
        Y::Sequence(_) => "a list",
        Y::Mapping(_) => "a mapping",
        Y::Tagged(_) => "a tagged value",
    }
}

/// Later layers win key by key; lists and scalars are replaced whole. A section the defaults
/// hold as a mapping stays one: serde would read `server: []` as a section with every field
/// left out, so a list or a scalar there is an error at its path (collected in `errors`,
/// returned once the whole layer is merged).
fn merge(
    base: &mut Value,
    over: Value,
    path: &str,
    errors: &mut Vec<FieldError>,
) -> Result<(), ConfigError> {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                let at = child(path, &k);
                match b.get_mut(&k) {
                    Some(existing) => {
                        merge(existing, v, &at, errors)?;
                    }
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (Value::Object(_), o) => errors.push(FieldError::new(
            path,
            format!("must be a mapping, got {}", crate::field_error::kind_of(&o)),
        )),
        (b, o) => *b = o,
    }
    if path.is_empty() && !errors.is_empty() {
        return Err(ConfigError::Invalid(std::mem::take(errors)));
    }
    Ok(())
}
