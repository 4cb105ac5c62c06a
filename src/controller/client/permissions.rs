//! The RBAC permission each request to the API server needs, written once: the bind's requests
//! and the lists of `simulate --live` name their row here, and a 403 answer names the
//! permission of the row the request was made with.

use std::fmt;

use crate::controller::cache::WatchedKind;
use kube::runtime::watcher;

use crate::snapshot::GARDEN_NAMESPACE;

/// Gardener's API group.
const GARDENER: &str = "core.gardener.cloud";
/// Kubernetes' core API group.
const CORE: &str = "";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Get,
    List,
    Update,
    Patch,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Update => "update",
            Verb::Patch => "patch",
        }
    }

    /// Whether a request with this verb writes: a 5xx answer then leaves its outcome unknown.
    pub fn writes(self) -> bool {
        matches!(self, Verb::Update | Verb::Patch)
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a permission is needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Wherever the objects are, as the resource is usually granted.
    Any,
    /// In this one namespace.
    Namespace(&'static str),
    /// In every namespace, where a grant in one namespace would be usual.
    AllNamespaces,
}

/// One permission: a verb on a resource of an API group, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Permission {
    pub verb: Verb,
    /// The resource with its subresource: `shoots`, `shoots/binding`.
    pub resource: &'static str,
    /// `core.gardener.cloud`; empty for Kubernetes' core group.
    pub group: &'static str,
    pub scope: Scope,
}

impl Permission {
    /// The resource as a message about a list names it: `seeds.core.gardener.cloud`,
    /// `configmaps in namespace garden`, `configmaps (all namespaces)`.
    pub fn qualified_resource(&self) -> String {
        let mut s = self.resource.to_string();
        if !self.group.is_empty() {
            s.push('.');
            s.push_str(self.group);
        }
        match self.scope {
            Scope::Any => {}
            Scope::Namespace(ns) => {
                s.push_str(" in namespace ");
                s.push_str(ns);
            }
            Scope::AllNamespaces => s.push_str(" (all namespaces)"),
        }
        s
    }
}

/// `update shoots/binding`: the verb and the resource, as a missing permission is named.
impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.verb, self.resource)
    }
}

const fn gardener(verb: Verb, resource: &'static str) -> Permission {
    Permission {
        verb,
        resource,
        group: GARDENER,
        scope: Scope::Any,
    }
}

// The bind.
/// Reading a shoot before its binding, or after a conflict.
pub const GET_SHOOT: Permission = gardener(Verb::Get, "shoots");
/// The binding (`bindingMode: Binding`).
pub const UPDATE_SHOOT_BINDING: Permission = gardener(Verb::Update, "shoots/binding");
/// The `spec.seedName` patch (`bindingMode: Patch`).
pub const PATCH_SHOOT: Permission = gardener(Verb::Patch, "shoots");

// The landscape `simulate --live` reads.
pub const LIST_SEEDS: Permission = gardener(Verb::List, "seeds");
pub const LIST_SHOOTS: Permission = gardener(Verb::List, "shoots");
pub const LIST_CLOUD_PROFILES: Permission = gardener(Verb::List, "cloudprofiles");
pub const LIST_NAMESPACED_CLOUD_PROFILES: Permission =
    gardener(Verb::List, "namespacedcloudprofiles");
pub const LIST_PROJECTS: Permission = gardener(Verb::List, "projects");
/// Region ConfigMaps live in the garden namespace only.
pub const LIST_REGION_CONFIG_MAPS: Permission = Permission {
    verb: Verb::List,
    resource: "configmaps",
    group: CORE,
    scope: Scope::Namespace(GARDEN_NAMESPACE),
};
/// Carbon-intensity ConfigMaps may be in any namespace.
pub const LIST_CARBON_CONFIG_MAPS: Permission = Permission {
    verb: Verb::List,
    resource: "configmaps",
    group: CORE,
    scope: Scope::AllNamespaces,
};

/// What a watched kind's feed lists (and watches, with the same grant).
pub fn feed_permission(kind: WatchedKind) -> Permission {
    match kind {
        WatchedKind::Shoot => LIST_SHOOTS,
        WatchedKind::Seed => LIST_SEEDS,
        WatchedKind::CloudProfile => LIST_CLOUD_PROFILES,
        WatchedKind::NamespacedCloudProfile => LIST_NAMESPACED_CLOUD_PROFILES,
        WatchedKind::Project => LIST_PROJECTS,
        WatchedKind::ConfigMap => LIST_REGION_CONFIG_MAPS,
        WatchedKind::CarbonConfigMap => LIST_CARBON_CONFIG_MAPS,
    }
}

/// A feed's failure as the missing permission it is, when the authorizer refused the list or
/// the watch: `forbidden: the scheduler needs permission to list and watch
/// seeds.core.gardener.cloud (the chart's roles grant it); the API server said: ...`. `None` for
/// every other failure.
pub fn feed_forbidden(kind: WatchedKind, e: &watcher::Error) -> Option<String> {
    let status = match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s)) => s,
        watcher::Error::WatchError(s) => s,
        _ => return None,
    };
    (status.code == 403 && denied_by_authorizer(&status.message)).then(|| {
        format!(
            "forbidden: the scheduler needs permission to list and watch {} (the chart's roles grant it); the API server said: {}",
            feed_permission(kind).qualified_resource(),
            status.message.trim()
        )
    })
}

/// Whether a 403 answer is the authorizer's: the identity may not make this request at all, for
/// any shoot. kube-apiserver words it `... is forbidden: User "NAME" cannot VERB resource ...`.
/// Admission plugins answer 403 too (gardener-apiserver's ShootValidator refuses a binding to a
/// seed the shoot cannot use: `... is forbidden: [spec.networking.pods: Required value ...]`);
/// such a refusal is about this shoot and this seed, not a missing permission.
pub fn denied_by_authorizer(message: &str) -> bool {
    message.contains(" is forbidden: User \"") && message.contains("\" cannot ")
}

#[cfg(test)]
mod tests {
    use crate::controller::client::permissions::*;

    #[test]
    fn a_permission_reads_as_the_messages_name_it() {
        assert_eq!(UPDATE_SHOOT_BINDING.to_string(), "update shoots/binding");
        assert_eq!(PATCH_SHOOT.to_string(), "patch shoots");
        assert_eq!(LIST_SEEDS.qualified_resource(), "seeds.core.gardener.cloud");
        assert_eq!(
            LIST_REGION_CONFIG_MAPS.qualified_resource(),
            "configmaps in namespace garden"
        );
        assert_eq!(
            LIST_CARBON_CONFIG_MAPS.qualified_resource(),
            "configmaps (all namespaces)"
        );
    }

    #[test]
    fn a_feed_refused_by_the_authorizer_names_what_to_grant_and_other_refusals_do_not() {
        let refused = |message: &str| {
            watcher::Error::InitialListFailed(kube::Error::Api(
                kube::core::Status::failure(message, "Forbidden")
                    .with_code(403)
                    .boxed(),
            ))
        };
        let denied = refused(
            "seeds.core.gardener.cloud is forbidden: User \"system:serviceaccount:garden:s\" cannot watch resource \"seeds\" in API group \"core.gardener.cloud\" at the cluster scope",
        );
        let text = feed_forbidden(WatchedKind::Seed, &denied).unwrap();
        assert!(
            text.starts_with(
                "forbidden: the scheduler needs permission to list and watch seeds.core.gardener.cloud (the chart's roles grant it); the API server said: seeds.core"
            ),
            "{text}"
        );
        let text = feed_forbidden(WatchedKind::ConfigMap, &denied).unwrap();
        assert!(
            text.contains("list and watch configmaps in namespace garden"),
            "{text}"
        );
        // an admission plugin's 403, and any other code, is not a missing permission
        assert_eq!(
            feed_forbidden(WatchedKind::Seed, &refused("quota exceeded")),
            None
        );
        let gone = watcher::Error::InitialListFailed(kube::Error::Api(
            kube::core::Status::failure("gone", "Gone")
                .with_code(410)
                .boxed(),
        ));
        assert_eq!(feed_forbidden(WatchedKind::Seed, &gone), None);
    }

    #[test]
    fn only_updates_and_patches_write() {
        assert!(UPDATE_SHOOT_BINDING.verb.writes() && PATCH_SHOOT.verb.writes());
        assert!(!GET_SHOOT.verb.writes() && !LIST_SHOOTS.verb.writes());
    }
}
