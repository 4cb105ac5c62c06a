//! One list request of the live read and what can go wrong with it: the request bounded in
//! time and bytes, the answer checked to be a list of the kind asked for, each item within the
//! size an API server stores, and a failure turned into a [`LiveError`] that says what to do.

use futures::StreamExt;
use kube::Resource;
use kube::api::{DynamicObject, ListParams};
use serde_json::value::RawValue;

use super::{LiveError, Read, Reader, with_causes};
use crate::controller::{TooLarge, in_chain};

/// One page of a list as the API server writes it: items kept raw until each is checked.
#[derive(serde::Deserialize)]
pub(super) struct Page {
    kind: Option<String>,
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
    pub(super) metadata: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta>,
    pub(super) items: Option<Vec<Box<RawValue>>>,
}

/// A page request that did not give a page: the API server's Status, or anything else.
pub(super) enum Failed {
    Status(Box<kube::core::Status>),
    Other(LiveError),
}

impl Reader<'_, '_> {
    /// One list request, bounded in time (headers and body) and in bytes, and checked to be a
    /// list of the kind asked for.
    pub(super) async fn page<K: Resource<DynamicType = ()>>(
        &self,
        url: &str,
        params: &ListParams,
        read: &Read,
    ) -> Result<Page, Failed> {
        let what = || read.what.to_string();
        let request = kube::core::Request::new(url)
            .list(params)
            .map_err(|e| {
                Failed::Other(LiveError::Unreachable {
                    what: what(),
                    message: e.to_string(),
                })
            })?
            .map(kube::client::Body::from);
        let timeout = self.limits.timeout;
        let answer = tokio::time::timeout(timeout, async {
            let response = self
                .client
                .send(request)
                .await
                .map_err(|e| Failed::Other(classify(read, e)))?;
            let (parts, body) = response.into_parts();
            let mut stream = axum::body::Body::new(body).into_data_stream();
            let mut bytes = Vec::new();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| {
                    let e = e.into_inner();
                    // the client stack's own cap on one list page
                    if let Some(too_large) = in_chain::<TooLarge>(&*e) {
                        return Failed::Other(LiveError::PageTooLarge {
                            what: what(),
                            limit: too_large.cap,
                        });
                    }
                    Failed::Other(LiveError::Unreachable {
                        what: what(),
                        message: format!("reading the answer: {}", with_causes(&*e)),
                    })
                })?;
                if (bytes.len() + chunk.len()) as u64 > self.limits.page_bytes {
                    return Err(Failed::Other(LiveError::PageTooLarge {
                        what: what(),
                        limit: self.limits.page_bytes,
                    }));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok((parts, bytes))
        })
        .await;
        let (parts, bytes) = match answer {
            Ok(answer) => answer?,
            Err(_) => {
                return Err(Failed::Other(LiveError::Timeout {
                    what: what(),
                    timeout,
                }));
            }
        };
        let code = parts.status.as_u16();
        let content_type = parts
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|t| format!(", {}", clip(t, 60)))
            .unwrap_or_default();
        let not_a_list = |why: String| {
            Failed::Other(LiveError::NotAList {
                what: what(),
                code,
                content_type: content_type.clone(),
                why,
            })
        };
        if !parts.status.is_success() {
            // The API server explains a refusal with a Status object; anything else is not it.
            return match serde_json::from_slice::<kube::core::Status>(&bytes) {
                Ok(mut s) if s.code != 0 || !s.message.is_empty() || !s.reason.is_empty() => {
                    s.code = code;
                    Err(Failed::Status(Box::new(s)))
                }
                _ if parts.status.is_redirection() => Err(not_a_list(format!(
                    "a redirect to {:?}",
                    parts
                        .headers
                        .get(http::header::LOCATION)
                        .and_then(|v| v.to_str().ok())
                        .map(|l| clip(l, 200))
                        .unwrap_or_default()
                ))),
                _ => Err(not_a_list(describe_body(&bytes))),
            };
        }
        let page: Page = serde_json::from_slice(&bytes)
            .map_err(|e| not_a_list(format!("{} ({e})", describe_body(&bytes))))?;
        let want_kind = format!("{}List", K::kind(&()));
        let want_version = K::api_version(&());
        if page.kind.as_deref() != Some(want_kind.as_str())
            || page.api_version.as_deref() != Some(&*want_version)
        {
            return Err(not_a_list(format!(
                "kind {:?}, apiVersion {:?} where {want_kind} {want_version} was asked for",
                clip(page.kind.as_deref().unwrap_or(""), 80),
                clip(page.api_version.as_deref().unwrap_or(""), 80),
            )));
        }
        if page.items.is_none() {
            return Err(not_a_list(format!(
                "{want_kind} without items (an empty list has \"items\": [])"
            )));
        }
        Ok(page)
    }

    /// One item of a page, within the size an API server stores.
    pub(super) fn object(
        &self,
        raw: &RawValue,
        index: usize,
        read: &Read,
    ) -> Result<DynamicObject, LiveError> {
        if raw.get().len() as u64 > self.limits.object_bytes {
            return Err(LiveError::ObjectTooLarge {
                what: read.what.to_string(),
                index,
                limit: self.limits.object_bytes,
            });
        }
        serde_json::from_str(raw.get()).map_err(|e| LiveError::NotAList {
            what: read.what.to_string(),
            code: 200,
            content_type: String::new(),
            why: format!("item {index} is not an object with metadata: {e}"),
        })
    }
}

/// At most `max` characters of a server's text, control characters escaped, for a message.
fn clip(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .take(max)
        .flat_map(char::escape_default)
        .collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// What a body that is not JSON looks like, for the message: its start, made visible.
fn describe_body(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "an empty body".into();
    }
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]);
    let text = text.trim();
    if text.to_ascii_lowercase().starts_with("<!doctype html") || text.starts_with("<html") {
        return "an HTML page (a login or proxy page?)".into();
    }
    format!("a body starting \"{}\"", clip(text, 60))
}

pub(super) fn classify(read: &Read, e: kube::Error) -> LiveError {
    let what = read.what.to_string();
    match e {
        kube::Error::Api(s) if s.code == 403 => LiveError::Forbidden {
            what,
            verb: read.permission.verb.as_str(),
            resource: read.permission.qualified_resource(),
            message: s.message,
        },
        kube::Error::Api(s) => LiveError::Api {
            what,
            code: s.code,
            message: s.message,
        },
        other => LiveError::Unreachable {
            what,
            message: with_causes(&other),
        },
    }
}
