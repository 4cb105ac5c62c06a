//! CustomResourceDefinitions of the Gardener kinds the scheduler reads and writes, for
//! development clusters that run without gardener-apiserver.
//!
//! Schemas keep unknown fields: the definitions describe where things are (`spec`, `status` as a
//! subresource, printer columns), not Gardener's validation. They declare the defaults of
//! [`crate::api::defaults`] that a structural schema can express, so that the API server stores
//! objects shaped as gardener-apiserver stores them; the toleration a shoot in namespace `garden`
//! gets depends on the namespace, which a schema cannot express. The rendered YAML lives in
//! `config/crd/`; `make crds` rewrites it and a test fails when it drifts.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec, CustomResourceDefinitionVersion, CustomResourceSubresourceStatus,
    CustomResourceSubresources, CustomResourceValidation, JSON, JSONSchemaProps,
    JSONSchemaPropsOrArray,
};
use kube::api::ObjectMeta;

use crate::api::defaults::{DEFAULT_IP_FAMILY, DEFAULT_PURPOSE};
use crate::api::{DEFAULT_SCHEDULER_NAME, GROUP, VERSION};

struct Kind {
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    status: bool,
    columns: &'static [(&'static str, &'static str, &'static str)],
}

const KINDS: &[Kind] = &[
    Kind {
        kind: "CloudProfile",
        plural: "cloudprofiles",
        namespaced: false,
        status: false,
        columns: &[("Type", "string", ".spec.type")],
    },
    Kind {
        kind: "NamespacedCloudProfile",
        plural: "namespacedcloudprofiles",
        namespaced: true,
        status: true,
        columns: &[("Parent", "string", ".spec.parent.name")],
    },
    Kind {
        kind: "Project",
        plural: "projects",
        namespaced: false,
        status: true,
        columns: &[("Namespace", "string", ".spec.namespace")],
    },
    Kind {
        kind: "Seed",
        plural: "seeds",
        namespaced: false,
        status: true,
        columns: &[
            ("Provider", "string", ".spec.provider.type"),
            ("Region", "string", ".spec.provider.region"),
            ("Allocatable", "string", ".status.allocatable.shoots"),
        ],
    },
    Kind {
        kind: "Shoot",
        plural: "shoots",
        namespaced: true,
        status: true,
        columns: &[
            ("Seed", "string", ".spec.seedName"),
            ("Region", "string", ".spec.region"),
            ("Operation", "string", ".status.lastOperation.state"),
        ],
    },
];

fn open_object() -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some("object".into()),
        x_kubernetes_preserve_unknown_fields: Some(true),
        ..Default::default()
    }
}

/// A schema of `type` with a default value.
fn defaulted(type_: &str, default: serde_json::Value) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some(type_.into()),
        default: Some(JSON(default)),
        ..Default::default()
    }
}

/// An open object with these properties declared.
fn open_with(properties: &[(&str, JSONSchemaProps)]) -> JSONSchemaProps {
    JSONSchemaProps {
        properties: Some(
            properties
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        ),
        ..open_object()
    }
}

/// `spec` of a kind: open, with the defaults a structural schema can express.
fn spec_schema(kind: &str) -> JSONSchemaProps {
    match kind {
        "Shoot" => {
            let ip_families = JSONSchemaProps {
                items: Some(JSONSchemaPropsOrArray::Schema(Box::new(JSONSchemaProps {
                    type_: Some("string".into()),
                    ..Default::default()
                }))),
                ..defaulted("array", serde_json::json!([DEFAULT_IP_FAMILY]))
            };
            let networking = JSONSchemaProps {
                default: Some(JSON(serde_json::json!({}))),
                ..open_with(&[("ipFamilies", ip_families)])
            };
            open_with(&[
                ("networking", networking),
                ("purpose", defaulted("string", DEFAULT_PURPOSE.into())),
                (
                    "schedulerName",
                    defaulted("string", DEFAULT_SCHEDULER_NAME.into()),
                ),
            ])
        }
        "Seed" => {
            // A stored seed always has `visible`: `scheduling` without it is `false`.
            let scheduling = JSONSchemaProps {
                default: Some(JSON(serde_json::json!({"visible": true}))),
                ..open_with(&[("visible", defaulted("boolean", false.into()))])
            };
            let settings = JSONSchemaProps {
                default: Some(JSON(serde_json::json!({}))),
                ..open_with(&[("scheduling", scheduling)])
            };
            open_with(&[("settings", settings)])
        }
        _ => open_object(),
    }
}

fn crd(k: &Kind) -> CustomResourceDefinition {
    let mut columns: Vec<CustomResourceColumnDefinition> = k
        .columns
        .iter()
        .map(|(name, type_, path)| CustomResourceColumnDefinition {
            name: (*name).into(),
            type_: (*type_).into(),
            json_path: (*path).into(),
            ..Default::default()
        })
        .collect();
    columns.push(CustomResourceColumnDefinition {
        name: "Age".into(),
        type_: "date".into(),
        json_path: ".metadata.creationTimestamp".into(),
        ..Default::default()
    });
    let mut props = std::collections::BTreeMap::new();
    props.insert("spec".to_string(), spec_schema(k.kind));
    props.insert("status".to_string(), open_object());
    CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{}.{GROUP}", k.plural)),
            ..Default::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: GROUP.into(),
            names: CustomResourceDefinitionNames {
                kind: k.kind.into(),
                list_kind: Some(format!("{}List", k.kind)),
                plural: k.plural.into(),
                singular: Some(k.kind.to_lowercase()),
                categories: Some(vec!["gardener".into()]),
                ..Default::default()
            },
            scope: if k.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            }
            .into(),
            versions: vec![CustomResourceDefinitionVersion {
                name: VERSION.into(),
                served: true,
                storage: true,
                additional_printer_columns: Some(columns),
                schema: Some(CustomResourceValidation {
                    open_api_v3_schema: Some(JSONSchemaProps {
                        properties: Some(props),
                        ..open_object()
                    }),
                }),
                subresources: k.status.then(|| CustomResourceSubresources {
                    status: Some(CustomResourceSubresourceStatus(serde_json::json!({}))),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        },
        status: None,
    }
}

/// Every definition as `(file name, YAML)`, in a stable order.
pub fn render() -> Vec<(String, String)> {
    KINDS
        .iter()
        .map(|k| {
            let c = crd(k);
            let yaml = serde_yaml_ng::to_string(&c).expect("a CRD serializes");
            (
                format!("{GROUP}_{}.yaml", k.plural),
                format!(
                    "# {} of {GROUP}/{VERSION}, for development clusters without gardener-apiserver.\n# Rendered from src/crds.rs by `make crds`: edit that file, not this one.\n{yaml}",
                    k.kind
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shoots_and_seeds_have_a_status_subresource() {
        for (file, yaml) in render() {
            if file.contains("_shoots") || file.contains("_seeds") {
                assert!(
                    yaml.contains("subresources:\n      status: {}"),
                    "{file}:\n{yaml}"
                );
            }
        }
    }
}
