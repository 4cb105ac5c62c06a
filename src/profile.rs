//! A scheduling profile: the filter pipeline with its region strategy, and the weighted
//! priorities, compiled once from the configuration.

use crate::config::{FilterConfig, PriorityConfig, ShootScheduler};
use crate::field_error::{FieldError, MAX_WEIGHT, bounded_positive, unsupported_value};
use crate::plugin::ClusterData;
use crate::predicates::{SetStep, Stage, build_filters, pipeline};
use crate::priorities::{self, Priority};
use crate::strategies::{self, RegionStrategy};

pub struct WeightedPriority {
    pub weight: f64,
    pub priority: Box<dyn Priority>,
}

pub struct Profile {
    /// Shown in explanations, events and metrics.
    pub name: String,
    /// The region strategy's name, as configured.
    pub strategy: &'static str,
    pub stages: Vec<Stage>,
    pub priorities: Vec<WeightedPriority>,
    /// A digest of the configuration the profile was built from (strategy, priorities with
    /// their weights and arguments, filters): two profiles of one name configured otherwise
    /// differ in it. xxh3-64, hex.
    pub fingerprint: String,
}

impl Profile {
    /// The per-seed columns the profile's stages declare (bits and indexes their fast answers
    /// read), for [`crate::snapshot::SeedColumns::build_declared`].
    pub fn columns(&self) -> Vec<crate::snapshot::columns::Column> {
        self.stages
            .iter()
            .flat_map(|s| s.columns())
            .copied()
            .collect()
    }

    /// Builds the profile described by the plain `schedulers.shoot` keys; errors carry field
    /// paths.
    pub fn from_config(name: &str, cfg: &ShootScheduler) -> Result<Profile, Vec<FieldError>> {
        Profile::build(
            name,
            &cfg.candidate_determination_strategy,
            &cfg.priorities_or_default(),
            cfg.filters.as_deref().unwrap_or_default(),
            "schedulers.shoot",
        )
    }

    /// Builds a profile from a strategy name, priorities and opt-in filters found at `path` in
    /// the config.
    pub fn build(
        name: &str,
        strategy: &str,
        configs: &[PriorityConfig],
        filters: &[FilterConfig],
        path: &str,
    ) -> Result<Profile, Vec<FieldError>> {
        let mut errors = Vec::new();
        let region = RegionStrategy::named(strategy);
        if region.is_none() {
            errors.push(unsupported_value(
                format!("{path}.candidateDeterminationStrategy"),
                strategy,
                strategies::names(),
            ));
        }
        let mut prios = Vec::new();
        for (i, p) in configs.iter().enumerate() {
            let path = format!("{path}.priorities[{i}]");
            errors.extend(bounded_positive(
                format!("{path}.weight"),
                p.weight,
                MAX_WEIGHT,
            ));
            if configs[..i].iter().any(|q| q.name == p.name) {
                errors.push(FieldError::new(
                    format!("{path}.name"),
                    format!("duplicate priority {:?}", p.name),
                ));
            }
            match priorities::build(p, &path) {
                Ok(priority) => prios.push(WeightedPriority {
                    weight: p.weight,
                    priority,
                }),
                Err(mut e) => errors.append(&mut e),
            }
        }
        let filters_config = filters;
        let filters = build_filters(filters, &format!("{path}.filters")).unwrap_or_else(|mut e| {
            errors.append(&mut e);
            Vec::new()
        });
        match region {
            Some(region) if errors.is_empty() => {
                use std::hash::Hasher;
                let strategy = region.name();
                let mut h = xxhash_rust::xxh3::Xxh3::new();
                let text =
                    serde_json::to_string(&(strategy, configs, filters_config)).unwrap_or_default();
                h.write(text.as_bytes());
                Ok(Profile {
                    fingerprint: format!("{:016x}", h.finish()),
                    name: name.to_string(),
                    strategy,
                    stages: pipeline(filters, Box::new(region)),
                    priorities: prios,
                })
            }
            _ => Err(errors),
        }
    }

    /// The cluster data the profile's filters and priorities declare they read, in pipeline
    /// order.
    pub fn cluster_data(&self) -> Vec<ClusterData> {
        let filters = self.stages.iter().flat_map(|s| match s {
            Stage::Filter(p) => p.cluster_data(),
            Stage::Narrow(_) => Vec::new(),
        });
        let priorities = self
            .priorities
            .iter()
            .flat_map(|w| w.priority.cluster_data());
        filters.chain(priorities).collect()
    }

    /// Upstream behaviour: `SameRegion` and `ShootCount` with weight 1.
    pub fn upstream_default() -> Profile {
        Profile::from_config("default", &ShootScheduler::default())
            .expect("default profile is valid")
    }
}
