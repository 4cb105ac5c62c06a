//! Label selectors (of CloudProfiles and shoots), compiled once.

use std::collections::BTreeMap;

use kube::core::{Selector, SelectorExt};

use crate::api::LabelSelector;
use crate::field_error::unsupported;

/// Compiles a label selector, rejecting unknown operators and malformed requirements.
pub fn compile_selector(ls: &LabelSelector) -> Result<Selector, String> {
    for (i, req) in ls.match_expressions.iter().flatten().enumerate() {
        let has_values = req.values.as_ref().is_some_and(|v| !v.is_empty());
        match req.operator.as_str() {
            "In" | "NotIn" if !has_values => {
                return Err(format!(
                    "matchExpressions[{i}]: operator {} needs at least one value",
                    req.operator
                ));
            }
            "Exists" | "DoesNotExist" if has_values => {
                return Err(format!(
                    "matchExpressions[{i}]: operator {} takes no values",
                    req.operator
                ));
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => {
                return Err(format!(
                    "matchExpressions[{i}].operator: {}",
                    unsupported(other, ["In", "NotIn", "Exists", "DoesNotExist"])
                ));
            }
        }
        if req.key.is_empty() {
            return Err(format!("matchExpressions[{i}].key: is required"));
        }
    }
    Selector::try_from(ls.clone()).map_err(|e| e.to_string())
}

/// Does the selector match these labels? (`None` matches all.)
pub fn selector_matches(sel: Option<&Selector>, labels: &BTreeMap<String, String>) -> bool {
    sel.is_none_or(|s| s.matches(labels))
}
