//! What a watch delivers, and how it becomes the typed object the cache applies.
//!
//! Most kinds arrive untyped ([`DynamicObject`]) and are decoded one by one. Shoots, the kind
//! that counts in the tens of thousands, are decoded straight from the bytes of the list page or
//! watch event ([`WatchedShoot`]): the typed form is parsed with every field the scheduler does
//! not read (managedFields, most of the status) skipped unread. A watch line holding a shoot with
//! a seed is parsed once; a pending shoot's JSON is kept aside as text until it is bound, so it
//! is read a second time for that text. Either way a single malformed object is reported with
//! its field path and skipped, never failing the page.

use crate::controller::client::decode::decode;
use std::borrow::Cow;
use std::fmt::Debug;

use crate::api::{ObjectMeta, Shoot};
use crate::controller::feed::lines::Wire;
use kube::Resource;
use kube::api::{DynamicObject, WatchEvent};
use kube::core::NamespaceResourceScope;
use serde::de::DeserializeOwned;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// An object as a watch delivers it.
pub(in crate::controller) trait Incoming<K>:
    Resource + Clone + Wire + Debug + Send + 'static
{
    /// The typed object, with the object's JSON for the kinds kept as sent; or why it does
    /// not fit, naming the field.
    fn decode(self) -> Result<(K, Option<Box<str>>), String>;
}

impl<K: DeserializeOwned> Incoming<K> for DynamicObject {
    fn decode(mut self) -> Result<(K, Option<Box<str>>), String> {
        if self.metadata.name.as_deref().is_none_or(str::is_empty) {
            return Err(missing_identity(&self.metadata, false));
        }
        self.metadata.managed_fields = None;
        decode(self).map(|typed| (typed, None))
    }
}

impl Wire for DynamicObject {}

/// Why an object without a name (or, for a namespaced kind, a namespace) is skipped: nothing
/// could be written back to it (a binding would go to `/`).
fn missing_identity(meta: &kube::api::ObjectMeta, namespaced: bool) -> String {
    let name = meta.name.as_deref().is_none_or(str::is_empty);
    let field = if name {
        "metadata.name"
    } else if namespaced {
        "metadata.namespace"
    } else {
        return String::new();
    };
    format!("{field}: is required (the object cannot be addressed without it)")
}

/// A shoot as the watch delivers it: typed, plus the JSON it was read from while it has no seed.
#[derive(Clone, Debug)]
pub struct WatchedShoot {
    /// the shoot; on a decoding error only its name, namespace and resourceVersion
    shoot: Shoot,
    error: Option<String>,
    /// the object's JSON, only for a shoot without `spec.seedName`: a shoot with a seed is
    /// never bound, so nothing sends its object back
    raw: Option<Box<str>>,
}

impl WatchedShoot {
    /// Reads the typed shoot from the object's JSON.
    pub fn from_raw(raw: &str) -> WatchedShoot {
        match serde_json::from_str::<Shoot>(raw) {
            Ok(shoot) => WatchedShoot::typed(shoot, Some(raw)),
            Err(_) => {
                // Read again, slowly, for the field path; and what identifies the object.
                let mut de = serde_json::Deserializer::from_str(raw);
                let error = match serde_path_to_error::deserialize::<_, Shoot>(&mut de) {
                    Ok(_) => "the object could not be read".to_string(),
                    Err(e) => {
                        let path = e.path().to_string();
                        let message =
                            crate::field_error::serde_message(&e.into_inner().to_string());
                        format!("{path}: {message}")
                    }
                };
                WatchedShoot {
                    shoot: Shoot {
                        metadata: identity(raw),
                        ..Default::default()
                    },
                    error: Some(error),
                    raw: None,
                }
            }
        }
    }
}

/// Name, namespace and resourceVersion of an object that is not a valid shoot, as far as they
/// can be read.
fn identity(json: &str) -> ObjectMeta {
    #[derive(Deserialize)]
    struct Object {
        metadata: Option<Meta>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Meta {
        name: Option<serde_json::Value>,
        namespace: Option<serde_json::Value>,
        resource_version: Option<serde_json::Value>,
    }
    let text = |v: Option<serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => Some(s),
        _ => None,
    };
    match serde_json::from_str::<Object>(json)
        .ok()
        .and_then(|o| o.metadata)
    {
        Some(m) => ObjectMeta {
            name: text(m.name),
            namespace: text(m.namespace),
            resource_version: text(m.resource_version),
            ..Default::default()
        },
        None => ObjectMeta::default(),
    }
}

/// The name under which serde_json hands a value's text to the visitor instead of parsing it
/// (how its `RawValue` is read). Any other deserializer, or serde_json itself should the name
/// ever change, hands over the parsed object instead: slower, the same result.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

impl<'de> Deserialize<'de> for WatchedShoot {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(RAW_VALUE_TOKEN, ShootVisitor)
    }
}

struct ShootVisitor;

impl<'de> Visitor<'de> for ShootVisitor {
    type Value = WatchedShoot;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a Shoot object")
    }

    /// serde_json: a single entry holding the object's text. Otherwise (a watch event whose
    /// `object` came before its `type` is buffered first): the object's own entries.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WatchedShoot, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Ok(WatchedShoot::from_raw("{}"));
        };
        if first == RAW_VALUE_TOKEN {
            let text: Text<'de> = map.next_value()?;
            return Ok(WatchedShoot::from_raw(text.as_str()));
        }
        let mut object = serde_json::Map::new();
        object.insert(first, map.next_value()?);
        while let Some((k, v)) = map.next_entry::<String, serde_json::Value>()? {
            object.insert(k, v);
        }
        Ok(WatchedShoot::from_raw(
            &serde_json::Value::Object(object).to_string(),
        ))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<WatchedShoot, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        Ok(WatchedShoot::from_raw(&value.to_string()))
    }
}

/// A string borrowed from the input where the deserializer can (serde_json reading a `&str`,
/// as kube does), copied otherwise: the text of a listed shoot is not copied unless kept.
enum Text<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Text<'_> {
    fn as_str(&self) -> &str {
        match self {
            Text::Borrowed(s) => s,
            Text::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Text<'de>, E> {
                Ok(Text::Borrowed(s))
            }
            fn visit_str<E>(self, s: &str) -> Result<Text<'de>, E> {
                Ok(Text::Owned(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<Text<'de>, E> {
                Ok(Text::Owned(s))
            }
        }
        d.deserialize_str(V)
    }
}

impl WatchedShoot {
    /// A shoot that decoded: skipped, naming the field, when it cannot be addressed (only its
    /// name, namespace and resourceVersion kept); else kept, with `raw`, its JSON, while it is
    /// pending.
    fn typed(shoot: Shoot, raw: Option<&str>) -> WatchedShoot {
        if !addressable(&shoot) {
            let meta = shoot.metadata;
            return WatchedShoot {
                error: Some(missing_identity(&meta, true)),
                shoot: Shoot {
                    metadata: ObjectMeta {
                        name: meta.name,
                        namespace: meta.namespace,
                        resource_version: meta.resource_version,
                        ..Default::default()
                    },
                    ..Default::default()
                },
                raw: None,
            };
        }
        WatchedShoot {
            raw: raw.filter(|_| pending(&shoot)).map(Box::from),
            shoot,
            error: None,
        }
    }

    /// A shoot decoded in one pass, unless its JSON is needed (pending and addressable: its bind
    /// sends the JSON back), which a second pass keeps.
    fn settled(shoot: Shoot) -> Option<WatchedShoot> {
        (!addressable(&shoot) || !pending(&shoot)).then(|| WatchedShoot::typed(shoot, None))
    }
}

fn given(s: Option<&str>) -> bool {
    s.is_some_and(|s| !s.is_empty())
}

/// A shoot with a name and a namespace: a bind can be written to it.
fn addressable(shoot: &Shoot) -> bool {
    given(shoot.metadata.name.as_deref()) && given(shoot.metadata.namespace.as_deref())
}

/// A shoot without `spec.seedName`.
fn pending(shoot: &Shoot) -> bool {
    !given(shoot.spec.seed_name.as_deref())
}

/// A shoot with a seed (all but the few pending ones), and one that cannot be addressed, is
/// decoded from its watch line or list item in one pass; a pending shoot, whose JSON is kept,
/// and a malformed one, whose fields are named, are read again as [`WatchedShoot`]'s
/// `Deserialize` reads them. Both ways give the same shoot.
impl Wire for WatchedShoot {
    fn read_event(line: &[u8]) -> serde_json::Result<WatchEvent<WatchedShoot>> {
        if let Ok(event) = serde_json::from_slice::<WatchEvent<Shoot>>(line) {
            let settled = match event {
                WatchEvent::Added(s) => WatchedShoot::settled(s).map(WatchEvent::Added),
                WatchEvent::Modified(s) => WatchedShoot::settled(s).map(WatchEvent::Modified),
                WatchEvent::Deleted(s) => WatchedShoot::settled(s).map(WatchEvent::Deleted),
                WatchEvent::Bookmark(b) => Some(WatchEvent::Bookmark(b)),
                WatchEvent::Error(e) => Some(WatchEvent::Error(e)),
            };
            if let Some(event) = settled {
                return Ok(event);
            }
        }
        serde_json::from_slice(line)
    }

    fn read_item(item: &[u8]) -> serde_json::Result<WatchedShoot> {
        if let Some(settled) = serde_json::from_slice::<Shoot>(item)
            .ok()
            .and_then(WatchedShoot::settled)
        {
            return Ok(settled);
        }
        serde_json::from_slice(item)
    }
}

impl Incoming<Shoot> for WatchedShoot {
    fn decode(self) -> Result<(Shoot, Option<Box<str>>), String> {
        match self.error {
            None => Ok((self.shoot, self.raw)),
            Some(e) => Err(e),
        }
    }
}

impl Resource for WatchedShoot {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(dt: &()) -> Cow<'_, str> {
        Shoot::kind(dt)
    }
    fn group(dt: &()) -> Cow<'_, str> {
        Shoot::group(dt)
    }
    fn version(dt: &()) -> Cow<'_, str> {
        Shoot::version(dt)
    }
    fn api_version(dt: &()) -> Cow<'_, str> {
        Shoot::api_version(dt)
    }
    fn plural(dt: &()) -> Cow<'_, str> {
        Shoot::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        &self.shoot.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.shoot.metadata
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::feed::incoming::*;

    #[test]
    fn a_malformed_object_is_reported_with_its_field_path() {
        let obj: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "core.gardener.cloud/v1beta1",
            "kind": "Shoot",
            "metadata": {"name": "bad", "namespace": "garden-a"},
            "spec": {"region": 5}
        }))
        .unwrap();
        let err = decode::<Shoot>(obj).unwrap_err();
        assert!(err.starts_with("spec.region: must be text, got 5"), "{err}");
    }

    fn watched(json: serde_json::Value) -> WatchedShoot {
        serde_json::from_str(&json.to_string()).unwrap()
    }

    #[test]
    fn a_listed_shoot_is_typed_and_keeps_the_json_it_was_read_from() {
        let json = serde_json::json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "a", "namespace": "garden-p", "resourceVersion": "9",
                         "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"region": "eu-1", "unknownToUs": {"x": 1}}
        });
        let (shoot, raw) = Incoming::<Shoot>::decode(watched(json.clone())).unwrap();
        assert_eq!(shoot.spec.region.as_deref(), Some("eu-1"));
        assert!(shoot.metadata.managed_fields.is_none());
        let raw: serde_json::Value = serde_json::from_str(&raw.unwrap()).unwrap();
        assert_eq!(raw, json);
    }

    #[test]
    fn a_shoot_without_a_name_or_namespace_is_skipped_naming_the_field() {
        for (json, field) in [
            (
                r#"{"metadata": null, "spec": {}}"#,
                "metadata.name: is required",
            ),
            (r#"{"spec": {}}"#, "metadata.name: is required"),
            (
                r#"{"metadata": {"name": "a"}, "spec": {}}"#,
                "metadata.namespace: is required",
            ),
        ] {
            let w = WatchedShoot::from_raw(json);
            let error = w.error.expect(json);
            assert!(error.starts_with(field), "{json}: {error}");
        }
        let seed: Result<(crate::api::Seed, _), String> =
            Incoming::decode(serde_json::from_str::<DynamicObject>(r#"{"metadata": {}}"#).unwrap());
        assert!(seed.unwrap_err().starts_with("metadata.name: is required"));
    }

    #[test]
    fn a_malformed_shoot_is_reported_with_its_field_path_and_identity() {
        let w = watched(serde_json::json!({
            "metadata": {"name": "bad", "namespace": "garden-a", "resourceVersion": "4"},
            "spec": {"region": 5}
        }));
        assert_eq!(w.meta().name.as_deref(), Some("bad"));
        assert_eq!(w.meta().namespace.as_deref(), Some("garden-a"));
        assert_eq!(w.meta().resource_version.as_deref(), Some("4"));
        let err = Incoming::<Shoot>::decode(w).unwrap_err();
        assert!(
            err.starts_with("spec.region: must be text, got 5 at line 1"),
            "{err}"
        );
    }

    #[test]
    fn a_page_of_shoots_with_one_malformed_is_read_whole() {
        let page = serde_json::json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "ShootList",
            "metadata": {"resourceVersion": "12"},
            "items": [
                {"metadata": {"name": "a", "namespace": "n", "resourceVersion": "10"}},
                {"metadata": {"name": "b", "namespace": "n", "resourceVersion": "11"},
                 "spec": {"tolerations": "none"}}
            ]
        });
        let list: kube::core::ObjectList<WatchedShoot> =
            serde_json::from_str(&page.to_string()).unwrap();
        assert_eq!(list.items.len(), 2);
        assert!(list.items[0].error.is_none());
        assert!(
            list.items[1]
                .error
                .as_deref()
                .unwrap()
                .starts_with("spec.tolerations")
        );
    }

    #[test]
    fn a_watch_event_carries_the_shoot_whichever_key_comes_first() {
        let object = r#"{"metadata":{"name":"a","namespace":"n","resourceVersion":"3"},"spec":{"region":"eu-1"}}"#;
        for line in [
            format!(r#"{{"type":"MODIFIED","object":{object}}}"#),
            format!(r#"{{"object":{object},"type":"MODIFIED"}}"#),
        ] {
            let ev: kube::core::WatchEvent<WatchedShoot> = serde_json::from_str(&line).unwrap();
            let kube::core::WatchEvent::Modified(w) = ev else {
                panic!("not a modification: {line}")
            };
            assert_eq!(w.meta().resource_version.as_deref(), Some("3"), "{line}");
            let (shoot, raw) = Incoming::<Shoot>::decode(w).unwrap();
            assert_eq!(shoot.spec.region.as_deref(), Some("eu-1"));
            let raw: serde_json::Value = serde_json::from_str(&raw.unwrap()).unwrap();
            let sent: serde_json::Value = serde_json::from_str(object).unwrap();
            assert_eq!(raw, sent, "{line}");
        }
    }

    #[test]
    fn a_watch_line_decodes_to_the_same_event_in_one_pass_as_in_two() {
        let shoot = |meta: &str, spec: &str| {
            format!(
                r#"{{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{meta},"spec":{spec},"status":{{"lastOperation":{{"type":"Reconcile","state":"Succeeded"}},"technicalID":"shoot--p--a"}}}}"#
            )
        };
        let meta = r#"{"name":"a","namespace":"garden-p","resourceVersion":"7","labels":{"x":"y"},"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]}"#;
        let bound = shoot(
            meta,
            r#"{"region":"eu-1","seedName":"s1","provider":{"type":"aws","workers":[]}}"#,
        );
        let lines = [
            format!(r#"{{"type":"ADDED","object":{bound}}}"#),
            format!(r#"{{"type":"MODIFIED","object":{bound}}}"#),
            format!(r#"{{"type":"DELETED","object":{bound}}}"#),
            format!(r#"{{"object":{bound},"type":"ADDED"}}"#),
            format!(r#"{{"type":"ADDED","object":{}}}"#, shoot(meta, r#"{"region":"eu-1"}"#)),
            format!(r#"{{"type":"ADDED","object":{}}}"#, shoot(meta, r#"{"seedName":""}"#)),
            format!(
                r#"{{"type":"ADDED","object":{}}}"#,
                shoot(r#"{"name":"a","resourceVersion":"5"}"#, r#"{"seedName":"s1"}"#)
            ),
            format!(
                r#"{{"type":"ADDED","object":{}}}"#,
                shoot(r#"{"namespace":"n","name":""}"#, r#"{}"#)
            ),
            r#"{"type":"ADDED","object":{"metadata":null}}"#.to_string(),
            format!(
                r#"{{"type":"MODIFIED","object":{}}}"#,
                shoot(meta, r#"{"seedName":"s1","region":5}"#)
            ),
            r#"{"type":"BOOKMARK","object":{"kind":"Shoot","apiVersion":"core.gardener.cloud/v1beta1","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}"#.to_string(),
            r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old","reason":"Expired","code":410}}"#.to_string(),
        ];
        for line in &lines {
            let one = WatchedShoot::read_event(line.as_bytes()).unwrap();
            let two: WatchEvent<WatchedShoot> = serde_json::from_slice(line.as_bytes()).unwrap();
            assert_eq!(format!("{one:?}"), format!("{two:?}"), "{line}");
            // the same object as an item of a list page
            let event: serde_json::Value = serde_json::from_str(line).unwrap();
            if event["type"] != "BOOKMARK" && event["type"] != "ERROR" {
                let item = event["object"].to_string();
                let one = WatchedShoot::read_item(item.as_bytes()).unwrap();
                let two: WatchedShoot = serde_json::from_str(&item).unwrap();
                assert_eq!(format!("{one:?}"), format!("{two:?}"), "{item}");
            }
        }
        let bad = r#"{"type":"ADDED","object":{"metadata":"#;
        assert!(
            WatchedShoot::read_event(bad.as_bytes())
                .unwrap_err()
                .is_eof()
        );
    }

    #[test]
    fn serde_json_hands_over_the_text_of_the_object_unparsed() {
        // the text as sent, spacing included: it was not parsed and written again
        let text = r#"{ "metadata": {"name": "a", "namespace": "n"} }"#;
        let w: WatchedShoot = serde_json::from_str(text).unwrap();
        assert_eq!(w.raw.as_deref(), Some(text));
    }

    #[test]
    fn the_json_of_a_shoot_with_a_seed_is_not_kept() {
        let w = watched(serde_json::json!({
            "metadata": {"name": "a", "namespace": "n", "resourceVersion": "2"},
            "spec": {"seedName": "s1"}
        }));
        let (shoot, raw) = Incoming::<Shoot>::decode(w).unwrap();
        assert_eq!(shoot.spec.seed_name.as_deref(), Some("s1"));
        assert!(raw.is_none());
    }
}
