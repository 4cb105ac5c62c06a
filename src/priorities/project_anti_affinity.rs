//! `ProjectAntiAffinity`: spread the shoots of one project over seeds (or regions), so that one
//! seed's outage does not take all of a project's control planes down at once.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::snapshot::Snapshot;

use super::framework::{Detail, Details, Priority, lower_is_better};
use crate::plugin::parse_args;

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "ProjectAntiAffinity";

/// Arguments that build it, for the generated profiles of the tests.
pub const EXAMPLE: &str = "{topology: seed}";

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

    /// The project's shoots per seed, from its own (small) per-namespace maps: looked up by name
    /// when there are fewer seeds than the maps have entries (the winner's detail), otherwise
    /// counted from the maps into one array indexed by position; by region, summed over every
    /// seed of the region. The details read the values.
    fn raw(
        &self,
        cx: &ShootContext,
        positions: &[u32],
        snap: &Snapshot,
        mut details: Details<'_>,
    ) -> Vec<f64> {
        let cols = snap.columns();
        // A project owns at most three namespaces under the project rule.
        let per_namespace: Vec<_> = snap
            .namespaces_of_project(&cx.project)
            .iter()
            .filter_map(|ns| snap.usage().namespace_seeds(ns))
            .collect();
        // Left empty while the project has no shoot on a seed of the columns.
        let by_position = || {
            let mut counts: Vec<u64> = Vec::new();
            for (seed, n) in per_namespace.iter().copied().flatten() {
                if let Some(i) = cols.position(seed) {
                    if counts.is_empty() {
                        counts = vec![0; cols.len()];
                    }
                    counts[i as usize] += u64::from(*n);
                }
            }
            counts
        };
        let project = || -> Arc<str> { cx.project.as_str().into() };
        match self.topology {
            Topology::Seed => {
                let entries: usize = per_namespace.iter().map(|m| m.len()).sum();
                let values: Vec<f64> = if positions.len() < entries {
                    positions
                        .iter()
                        .map(|&i| {
                            let seed = &*cols.info(i).name;
                            let n: u64 = per_namespace
                                .iter()
                                .map(|m| u64::from(m.get(seed).copied().unwrap_or(0)))
                                .sum();
                            n as f64
                        })
                        .collect()
                } else {
                    let counts = by_position();
                    if counts.is_empty() {
                        vec![0.0; positions.len()]
                    } else {
                        positions
                            .iter()
                            .map(|&i| counts[i as usize] as f64)
                            .collect()
                    }
                };
                if details.on() {
                    let project = project();
                    for &n in &values {
                        let (n, project) = (n as u64, Arc::clone(&project));
                        details.put(|| {
                            Detail::lazy(move |f| {
                                write!(f, "{n} shoot(s) of project {project} on this seed")
                            })
                        });
                    }
                }
                values
            }
            Topology::Region => {
                // Every seed of the landscape counts, feasible or not: the project's shoots in a
                // region are there whatever this shoot may use.
                let mut per_region: HashMap<&str, u64> = HashMap::new();
                for (i, n) in by_position().into_iter().enumerate() {
                    *per_region
                        .entry(cols.info(i as u32).region.as_str())
                        .or_default() += n;
                }
                let values: Vec<f64> = positions
                    .iter()
                    .map(|&i| {
                        let region = cols.info(i).region.as_str();
                        per_region.get(region).copied().unwrap_or(0) as f64
                    })
                    .collect();
                if details.on() {
                    let project = project();
                    // One detail per region, shared by its seeds.
                    let mut shared: HashMap<&str, Detail> = HashMap::new();
                    for (&i, &n) in positions.iter().zip(&values) {
                        let region = &cols.info(i).region;
                        let detail = shared.entry(region.as_str()).or_insert_with(|| {
                            let (n, project, region) =
                                (n as u64, Arc::clone(&project), region.clone());
                            Detail::lazy(move |f| {
                                write!(f, "{n} shoot(s) of project {project} in region {region}")
                            })
                        });
                        details.put(|| detail.clone());
                    }
                }
                values
            }
        }
    }

    fn normalize(&self, values: &[f64]) -> Vec<f64> {
        lower_is_better(values)
    }
}

#[cfg(test)]
mod tests;
