//! Writing a decision: the `shoots/binding` subresource, or a `spec.seedName` patch on clusters
//! without it. Both carry the resourceVersion the decision was based on, so a shoot changed
//! meanwhile is rejected by the API server (409) instead of being overwritten.

use std::time::Duration;

use crate::api::Shoot;
use crate::config::BindingMode;
use crate::controller::client::brief::brief;
use crate::controller::client::permissions::{
    GET_SHOOT, PATCH_SHOOT, Permission, UPDATE_SHOOT_BINDING, denied_by_authorizer,
};
use crate::controller::client::stack::Fenced;
use crate::controller::leader::Leadership;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Client, Resource};
use serde_json::json;

/// Field manager of every write the scheduler makes.
pub const FIELD_MANAGER: &str = "gardener-scheduler";

#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The shoot changed since the decision read it; read it again and decide again.
    #[error("shoot changed since it was read (409 Conflict)")]
    Conflict,
    /// Someone else assigned a seed meanwhile; leave the shoot alone.
    #[error("spec.seedName was set to {0:?} meanwhile")]
    AlreadyAssigned(String),
    #[error("shoot no longer exists")]
    NotFound,
    #[error(
        "the API server has no shoots/binding subresource (a cluster with CRDs only?); set schedulers.shoot.bindingMode: Patch"
    )]
    NoBindingSubresource,
    /// The lease was lost between the decision and the write; nothing was written.
    #[error("leadership lost before the bind was written; the new leader decides")]
    NotLeader,
    /// 403 from the authorizer: the scheduler's identity lacks a permission. Names it, since that
    /// is the fix. (A 403 from an admission plugin is about the shoot: [`BindError::Rejected`].)
    #[error(
        "{action}: forbidden: the scheduler needs permission to {permission} in API group {} (the chart's ClusterRole grants it); the API server said: {message}",
        .permission.group
    )]
    Forbidden {
        action: &'static str,
        permission: Permission,
        message: String,
    },
    /// The API server refused the request (a 4xx answer): the bind did not happen.
    #[error("{action}: {}", brief(.source))]
    Rejected {
        action: &'static str,
        source: kube::Error,
    },
    /// No answer that proves the write was refused — none at all (a transport error, a
    /// timeout, the lease ending while it was on the wire) or a 5xx, which a gateway or an
    /// API server that lost its etcd answer may send after the write was committed: the bind
    /// may or may not have happened.
    #[error("{action}: outcome unknown: {message}")]
    Unknown {
        action: &'static str,
        /// the HTTP status of the answer, if one came
        code: Option<u16>,
        message: String,
    },
    /// A read brought no answer that could be read (none at all, one over its cap, one that is
    /// not the API server's JSON): nothing was written.
    #[error("{action}: {message}; nothing was written")]
    ReadFailed {
        action: &'static str,
        message: String,
    },
}

impl BindError {
    /// Whether the write may have been applied although it reported an error.
    pub fn outcome_unknown(&self) -> bool {
        matches!(self, BindError::Unknown { .. })
    }

    /// How long the server asked to wait before trying again (`Retry-After`, carried in the
    /// answer's `details.retryAfterSeconds` as the API server sends it with a 429).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            BindError::Rejected {
                source: kube::Error::Api(s),
                ..
            } => s
                .details
                .as_ref()
                .map(|d| d.retry_after_seconds)
                .filter(|&s| s > 0)
                .map(|s| Duration::from_secs(u64::from(s))),
            _ => None,
        }
    }

    /// The HTTP status that refused the bind (`none`: no answer), for the
    /// `bind_errors_total{code}` metric; `None` when no request was refused.
    pub fn code(&self) -> Option<String> {
        match self {
            BindError::Conflict => Some("409".into()),
            BindError::NotFound | BindError::NoBindingSubresource => Some("404".into()),
            BindError::Forbidden { .. } => Some("403".into()),
            BindError::Rejected { source, .. } => Some(match source {
                kube::Error::Api(s) => s.code.to_string(),
                _ => "none".into(),
            }),
            BindError::Unknown { code, .. } => {
                Some(code.map_or_else(|| "none".into(), |c| c.to_string()))
            }
            BindError::ReadFailed { .. } => Some("none".into()),
            BindError::AlreadyAssigned(_) | BindError::NotLeader => None,
        }
    }
}

/// One request of a bind: what it does (for messages) and its row of the permission table.
#[derive(Clone, Copy)]
struct Step {
    action: &'static str,
    permission: Permission,
}

const READ: Step = Step {
    action: "reading shoot",
    permission: GET_SHOOT,
};
const UPDATE_BINDING: Step = Step {
    action: "updating shoots/binding",
    permission: UPDATE_SHOOT_BINDING,
};
const PATCH_SEED_NAME: Step = Step {
    action: "patching spec.seedName",
    permission: PATCH_SHOOT,
};

fn classify(step: Step, e: kube::Error) -> BindError {
    let action = step.action;
    if let kube::Error::Service(inner) = &e {
        match Fenced::of(inner.as_ref()) {
            Some(Fenced::NotLeader) => return BindError::NotLeader,
            Some(Fenced::LeaseEnded(_)) => {
                return BindError::Unknown {
                    action,
                    code: None,
                    message: inner.to_string(),
                };
            }
            None => {}
        }
    }
    match &e {
        kube::Error::Api(s) if s.code >= 500 && step.permission.verb.writes() => {
            BindError::Unknown {
                action,
                code: Some(s.code),
                message: brief(&e),
            }
        }
        kube::Error::Api(s) if s.code == 409 => BindError::Conflict,
        kube::Error::Api(s) if s.code == 404 => BindError::NotFound,
        kube::Error::Api(s) if s.code == 403 && denied_by_authorizer(&s.message) => {
            BindError::Forbidden {
                action,
                permission: step.permission,
                message: s.message.clone(),
            }
        }
        kube::Error::Api(_) => BindError::Rejected { action, source: e },
        _ if !step.permission.verb.writes() => BindError::ReadFailed {
            action,
            message: brief(&e),
        },
        _ => BindError::Unknown {
            action,
            code: None,
            message: brief(&e),
        },
    }
}

async fn timed<T>(
    step: Step,
    limit: Duration,
    fut: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, BindError> {
    match tokio::time::timeout(limit, fut).await {
        Ok(r) => r.map_err(|e| classify(step, e)),
        Err(_) if !step.permission.verb.writes() => Err(BindError::ReadFailed {
            action: step.action,
            message: format!("no answer within {limit:?}"),
        }),
        Err(_) => Err(BindError::Unknown {
            action: step.action,
            code: None,
            message: format!("no answer within {limit:?}"),
        }),
    }
}

/// Raw access to shoots, keeping every field (a binding update sends the whole object).
pub fn raw_shoots(client: &Client, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), namespace, &ApiResource::erase::<Shoot>(&()))
}

/// The object a binding update sends: the shoot as read (`current`), at the resourceVersion the
/// decision saw (`observed`), with `spec.seedName` set to `seed` and the decision record
/// annotated, in work linear in the shoot. A shoot that already names a seed is refused.
pub fn binding_object(
    mut current: DynamicObject,
    observed: String,
    seed: &str,
    record: Option<&str>,
) -> Result<DynamicObject, BindError> {
    if let Some(assigned) = current.data["spec"]["seedName"]
        .as_str()
        .filter(|s| !s.is_empty())
    {
        return Err(BindError::AlreadyAssigned(assigned.to_string()));
    }
    current.metadata.resource_version = Some(observed);
    current.metadata.managed_fields = None;
    if let Some(r) = record {
        current
            .metadata
            .annotations
            .get_or_insert_default()
            .insert(crate::api::ANNOTATION_DECISION.into(), r.into());
    }
    if current.types.is_none() {
        current.types = Some(kube::api::TypeMeta {
            api_version: Shoot::api_version(&()).into(),
            kind: Shoot::kind(&()).into(),
        });
    }
    match current.data.get_mut("spec") {
        Some(serde_json::Value::Object(spec)) => {
            spec.insert("seedName".into(), json!(seed));
        }
        _ => current.data["spec"] = json!({ "seedName": seed }),
    }
    Ok(current)
}

/// Binds `shoot` (as observed, with its resourceVersion) to `seed`. Returns the new
/// resourceVersion. Nothing is written unless `leadership` holds when the bind starts; the
/// client's lease fence checks again when the request is sent (see `stack::fence`).
///
/// In `Binding` mode the binding carries the whole shoot: `raw`, the object as the watch
/// delivered it at the observed resourceVersion, when the cache has it (one request); otherwise
/// the shoot is read first (two requests). Either way every field the API server sent goes back
/// unchanged but `spec.seedName`.
#[allow(clippy::too_many_arguments)]
pub async fn bind(
    client: &Client,
    mode: BindingMode,
    shoot: &Shoot,
    raw: Option<&str>,
    seed: &str,
    record: Option<&str>,
    timeout: Duration,
    leadership: &Leadership,
) -> Result<String, BindError> {
    let may_write = || {
        if leadership.is_leader() {
            Ok(())
        } else {
            Err(BindError::NotLeader)
        }
    };
    let ns = shoot.metadata.namespace.as_deref().unwrap_or_default();
    let name = shoot.metadata.name.as_deref().unwrap_or_default();
    let observed = shoot.metadata.resource_version.clone().unwrap_or_default();
    let api = raw_shoots(client, ns);
    let written = match mode {
        BindingMode::Patch => {
            let mut patch = json!({
                "metadata": { "resourceVersion": observed },
                "spec": { "seedName": seed },
            });
            if let Some(r) = record {
                patch["metadata"]["annotations"] = json!({ crate::api::ANNOTATION_DECISION: r });
            }
            let pp = PatchParams {
                field_manager: Some(FIELD_MANAGER.into()),
                ..Default::default()
            };
            may_write()?;
            timed(
                PATCH_SEED_NAME,
                timeout,
                api.patch(name, &pp, &Patch::Merge(&patch)),
            )
            .await?
        }
        BindingMode::Binding => {
            // The binding update carries the whole shoot, as gardener-apiserver expects: the
            // object the watch delivered, else a fresh read.
            let cached = raw.and_then(|json| match serde_json::from_str::<DynamicObject>(json) {
                Ok(o) => Some(o),
                Err(e) => {
                    tracing::warn!(error = %e, "cached shoot is not a valid object; reading it");
                    None
                }
            });
            let from_cache = cached.is_some();
            let read = match cached {
                Some(o) => o,
                None => timed(READ, timeout, api.get(name)).await?,
            };
            let current = binding_object(read, observed, seed, record)?;
            let pp = PostParams {
                field_manager: Some(FIELD_MANAGER.into()),
                ..Default::default()
            };
            may_write()?;
            match timed(
                UPDATE_BINDING,
                timeout,
                api.replace_subresource("binding", name, &pp, &current),
            )
            .await
            {
                Err(BindError::NotFound) => {
                    // The shoot was deleted, or the subresource itself is missing; tell the two
                    // apart by reading it.
                    tracing::debug!(from_cache, "binding answered 404; reading the shoot");
                    return match timed(READ, timeout, api.get(name)).await {
                        Ok(_) => Err(BindError::NoBindingSubresource),
                        Err(e) => Err(e),
                    };
                }
                other => other?,
            }
        }
    };
    Ok(written.metadata.resource_version.unwrap_or_default())
}

/// Reads a shoot again (after a conflict or an unknown outcome), typed and as sent (JSON
/// without managedFields). `Ok(None)` when it is gone.
pub async fn read_shoot(
    client: &Client,
    namespace: &str,
    name: &str,
    timeout: Duration,
) -> Result<Option<(Shoot, serde_json::Value)>, BindError> {
    let api = raw_shoots(client, namespace);
    match timed(READ, timeout, api.get(name)).await {
        Ok(mut obj) => {
            obj.metadata.managed_fields = None;
            let value = serde_json::to_value(&obj).map_err(|e| BindError::ReadFailed {
                action: READ.action,
                message: e.to_string(),
            })?;
            let typed = crate::controller::client::decode::decode::<Shoot>(obj).map_err(|e| {
                BindError::ReadFailed {
                    action: READ.action,
                    message: format!("decoding the shoot: {e}"),
                }
            })?;
            Ok(Some((typed, value)))
        }
        Err(BindError::NotFound) => Ok(None),
        Err(e) => Err(e),
    }
}
