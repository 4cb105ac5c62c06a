//! `ProjectAntiAffinity`: spread the shoots of one project over seeds (or regions), so that one
//! seed's outage does not take all of a project's control planes down at once.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Detail, Priority, RawScore, lower_is_better};
use crate::plugin::parse_args;

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "ProjectAntiAffinity";

/// Where shoots of one project should not pile up.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Topology {
    /// Count the project's shoots on the seed itself.
    #[default]
    Seed,
    /// Count the project's shoots on every seed of the seed's region.
    Region,
}

/// Fewer shoots of the shoot's project on the seed (or in its region) scores higher: the fewest
/// score 100, the most 0, linear in between. When this priority dominates, a project with `k`
/// shoots and `m` equally good seeds ends up with at most `ceil(k / m)` shoots per seed.
pub struct ProjectAntiAffinity {
    topology: Topology,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Args {
    topology: Topology,
}

pub(super) fn build(
    args: &serde_json::Value,
    path: &str,
) -> Result<Box<dyn Priority>, Vec<FieldError>> {
    let a: Args = parse_args(args, path)?;
    Ok(Box::new(ProjectAntiAffinity::new(a.topology)))
}

impl ProjectAntiAffinity {
    pub fn new(topology: Topology) -> Self {
        Self { topology }
    }
}

impl Priority for ProjectAntiAffinity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn raw(&self, cx: &ShootContext, seeds: &[&SeedInfo], snap: &Snapshot) -> Vec<RawScore> {
        // A project owns at most three namespaces under the project rule; their per-seed counts
        // are looked up once, so counting a seed is O(1) whatever the other projects hold.
        let per_namespace: Vec<_> = snap
            .namespaces_of_project(&cx.project)
            .iter()
            .filter_map(|ns| snap.usage().namespace_seeds(ns))
            .collect();
        let on_seed = |seed: &str| -> u64 {
            per_namespace
                .iter()
                .map(|m| u64::from(m.get(seed).copied().unwrap_or(0)))
                .sum()
        };
        let project: Arc<str> = cx.project.as_str().into();
        match self.topology {
            Topology::Seed => seeds
                .iter()
                .map(|s| {
                    let n = on_seed(&s.name);
                    let project = Arc::clone(&project);
                    RawScore {
                        value: n as f64,
                        detail: Detail::lazy(move |f| {
                            write!(f, "{n} shoot(s) of project {project} on this seed")
                        }),
                    }
                })
                .collect(),
            Topology::Region => {
                // Every seed of the landscape counts, feasible or not: the project's shoots in a
                // region are there whatever this shoot may use.
                let mut per_region: HashMap<&str, u64> = HashMap::new();
                for s in snap.seeds() {
                    *per_region.entry(s.region.as_str()).or_default() += on_seed(&s.name);
                }
                // One detail per region, shared by its seeds.
                let mut details: HashMap<&str, RawScore> = HashMap::new();
                seeds
                    .iter()
                    .map(|s| {
                        details
                            .entry(s.region.as_str())
                            .or_insert_with(|| {
                                let n = per_region.get(s.region.as_str()).copied().unwrap_or(0);
                                let (project, region) = (Arc::clone(&project), s.region.clone());
                                RawScore {
                                    value: n as f64,
                                    detail: Detail::lazy(move |f| {
                                        write!(
                                            f,
                                            "{n} shoot(s) of project {project} in region {region}"
                                        )
                                    }),
                                }
                            })
                            .clone()
                    })
                    .collect()
            }
        }
    }

    /// With `topology: seed`, the project's shoots per seed position, counted from its own
    /// (small) per-namespace maps into one array indexed by position.
    fn values(&self, cx: &ShootContext, positions: &[u32], snap: &Snapshot) -> Option<Vec<f64>> {
        if self.topology != Topology::Seed {
            return None;
        }
        let cols = snap.columns();
        // Left empty while the project has no shoot on a seed of the columns.
        let mut counts: Vec<u64> = Vec::new();
        for ns in snap.namespaces_of_project(&cx.project) {
            for (seed, n) in snap.usage().namespace_seeds(&ns).into_iter().flatten() {
                if let Some(i) = cols.position(seed) {
                    if counts.is_empty() {
                        counts = vec![0; cols.len()];
                    }
                    counts[i as usize] += u64::from(*n);
                }
            }
        }
        Some(if counts.is_empty() {
            vec![0.0; positions.len()]
        } else {
            positions
                .iter()
                .map(|&i| counts[i as usize] as f64)
                .collect()
        })
    }

    fn normalize(&self, values: &[f64]) -> Vec<f64> {
        lower_is_better(values)
    }
}

#[cfg(test)]
mod tests;
