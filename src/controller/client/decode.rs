//! An object the API server sent, typed: what does not fit the type is named by its field path.

use kube::api::DynamicObject;
use serde::de::DeserializeOwned;

/// Decodes an untyped object into its typed form, naming the field that did not fit.
pub fn decode<K: DeserializeOwned>(obj: DynamicObject) -> Result<K, String> {
    let value = serde_json::to_value(obj).map_err(|e| e.to_string())?;
    decode_value(&value)
}

/// As [`decode`], from the object's JSON.
pub fn decode_value<K: DeserializeOwned>(value: &serde_json::Value) -> Result<K, String> {
    serde_path_to_error::deserialize::<_, K>(value).map_err(|e| {
        let path = e.path().to_string();
        let message = crate::field_error::serde_message(&e.into_inner().to_string());
        format!("{path}: {message}")
    })
}
