use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::ClusterResourceScope;

use super::{api_types, gardener_resource};

api_types! {
    /// A Gardener Project owns one namespace; shoots in it belong to the project.
    pub struct Project {
        pub metadata: ObjectMeta,
        pub spec: ProjectSpec,
    }

    pub struct ProjectSpec {
        pub namespace: Option<String>,
    }
}
gardener_resource!(Project, "Project", "projects", ClusterResourceScope);
