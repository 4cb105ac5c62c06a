//! The two writes of a published plan: its ConfigMap applied (server-side, so that a new plan
//! replaces the old one whole), and removed once it no longer holds.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::Value;

use crate::controller::FIELD_MANAGER;

/// Applies the ConfigMap `cm` (as [`super::publish::config_map`] makes it) in `namespace`.
pub async fn apply(client: &Client, namespace: &str, cm: &Value) -> Result<(), kube::Error> {
    let name = cm["metadata"]["name"].as_str().unwrap_or_default();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    api.patch(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(cm),
    )
    .await
    .map(|_| ())
}

/// Removes ConfigMap `namespace/name`; one already gone is fine.
pub async fn delete(client: &Client, namespace: &str, name: &str) -> Result<(), kube::Error> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}
