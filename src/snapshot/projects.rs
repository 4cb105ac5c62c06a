//! Projects: which project owns a namespace, and which projects opt out of residency.

use super::Snapshot;
use crate::api::Project;

impl Snapshot {
    pub fn upsert_project(&mut self, project: &Project) {
        self.store_project(
            project.metadata.name.clone().unwrap_or_default(),
            project.spec.namespace.clone(),
            crate::api::residency_opt_out(&project.metadata),
        );
    }

    /// Stores what the decision reads of a project: its namespace and whether it opted out of
    /// residency, in work that does not grow with the project.
    pub fn store_project(&mut self, name: String, namespace: Option<String>, opt_out: bool) {
        if opt_out {
            self.residency_opt_outs.insert(name.clone());
        } else {
            self.residency_opt_outs.remove(&name);
        }
        if let Some(old_ns) = self.project_namespaces.remove(&name) {
            self.projects.remove(&old_ns);
        }
        if let Some(ns) = namespace.filter(|n| !n.is_empty()) {
            self.projects.insert(ns.clone(), name.clone());
            self.project_namespaces.insert(name, ns);
        }
    }

    pub fn remove_project(&mut self, name: &str) {
        self.residency_opt_outs.remove(name);
        if let Some(ns) = self.project_namespaces.remove(name) {
            self.projects.remove(&ns);
        }
    }

    /// The namespaces whose shoots belong to `project` under [`Snapshot::project_of`]: at most
    /// the one its Project object claims, `garden-<project>` and `<project>` itself.
    pub fn namespaces_of_project(&self, project: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::with_capacity(3);
        let candidates = [
            self.project_namespaces.get(project).cloned(),
            Some(format!("garden-{project}")),
            Some(project.to_string()),
        ];
        for ns in candidates.into_iter().flatten() {
            if !out.contains(&ns) && self.project_of(&ns) == project {
                out.push(ns);
            }
        }
        out
    }

    /// Does the project carry the residency opt-out annotation?
    pub fn project_opts_out_of_residency(&self, project: &str) -> bool {
        self.residency_opt_outs.contains(project)
    }

    /// The project owning a namespace: from a Project object, else `garden-X` -> `X`, else the
    /// namespace itself.
    pub fn project_of(&self, namespace: &str) -> String {
        if let Some(p) = self.projects.get(namespace) {
            return p.clone();
        }
        namespace
            .strip_prefix("garden-")
            .filter(|p| !p.is_empty())
            .unwrap_or(namespace)
            .to_string()
    }
}
