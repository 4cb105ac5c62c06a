//! A plan the scheduler process published (seed evacuation, docs/operations/evacuation.md), read
//! from its ConfigMap for `plan apply --from-configmap`. The ConfigMap is found with a `list`
//! restricted to its name, so the permission that reads the region ConfigMaps reads it too.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, ListParams};

/// The ConfigMap key that holds the plan, as `plan drain -o json` writes it.
pub const PLAN_KEY: &str = "plan.json";

#[derive(Debug, thiserror::Error)]
pub enum PublishedError {
    #[error(
        "configmap {namespace}/{name}: listing ConfigMaps in namespace {namespace} is forbidden \
         ({message}); reading a published plan needs `list` on configmaps there (the chart's \
         planApplier role grants it in garden)"
    )]
    Forbidden {
        namespace: String,
        name: String,
        message: String,
    },
    #[error("configmap {namespace}/{name}: reading it failed: {source}")]
    Read {
        namespace: String,
        name: String,
        source: kube::Error,
    },
    #[error(
        "configmap {namespace}/{name}: not found; a seed's evacuation plan is removed once the \
         seed is healthy again (kubectl -n {namespace} get configmaps -l \
         scheduling.gardener.cloud/plan lists the published plans)"
    )]
    NotFound { namespace: String, name: String },
    #[error(
        "configmap {namespace}/{name}: holds no {PLAN_KEY} (a plan too large for a ConfigMap is \
         published without it; its summary says how to compute it)"
    )]
    NoPlan { namespace: String, name: String },
}

/// The name a published plan goes by in messages: `configmap NAMESPACE/NAME`.
pub fn label(namespace: &str, name: &str) -> String {
    format!("configmap {namespace}/{name}")
}

/// The plan's text in ConfigMap `namespace/name`.
pub async fn read(client: &Client, namespace: &str, name: &str) -> Result<String, PublishedError> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let params = ListParams::default().fields(&format!("metadata.name={name}"));
    let (namespace, name) = (namespace.to_string(), name.to_string());
    let list = match api.list(&params).await {
        Ok(list) => list,
        Err(kube::Error::Api(s)) if s.code == 403 => {
            return Err(PublishedError::Forbidden {
                namespace,
                name,
                message: s.message,
            });
        }
        Err(source) => {
            return Err(PublishedError::Read {
                namespace,
                name,
                source,
            });
        }
    };
    let Some(cm) = list.items.into_iter().next() else {
        return Err(PublishedError::NotFound { namespace, name });
    };
    cm.data
        .and_then(|mut d| d.remove(PLAN_KEY))
        .ok_or(PublishedError::NoPlan { namespace, name })
}
