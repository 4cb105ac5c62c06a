//! Predicates: keep the seeds that can host the shoot.
//!
//! A [`Predicate`] looks at one shoot (its precomputed [`ShootContext`]) and one seed and says
//! `Ok(())` or why not. Steps that need to see all remaining seeds at once (a preference with
//! fallback, a minimum over the set) are [`SetStep`]s and say so. The order of [`pipeline`] is
//! upstream Gardener's order; a seed is reported with the first stage that rejected it.
//! Opt-in filters ([`OPT_IN`], configured under `filters`) run after the built-in predicates
//! and before the region strategy.
//!
//! Each filter's file also says how the decision answers it fast for a shoot
//! ([`Predicate::fast_check`]), gives its verdict and reason from one [`Predicate::check`], and
//! declares its reasons
//! ([`crate::reason::Declared`]); the decision pipeline never names a filter.
//!
//! [`Predicate`]: crate::predicates::Predicate
//! [`ShootContext`]: crate::context::ShootContext
//! [`SetStep`]: crate::predicates::SetStep
//! [`pipeline`]: crate::predicates::pipeline
//! [`OPT_IN`]: crate::predicates::OPT_IN
//! [`Predicate::fast_check`]: crate::predicates::Predicate::fast_check
//! [`Predicate::check`]: crate::predicates::Predicate::check

mod access_restrictions;
mod cloud_profile_selector;
mod default_domain;
mod emergency_stop;
pub mod framework;
mod high_availability_zones;
mod max_latency;
mod networks;
mod provider;
mod residency;
mod seed_capacity;
mod shoot_selector;
#[cfg(any(test, feature = "test-util"))]
pub mod slow;
mod taints;
#[cfg(any(test, feature = "test-util"))]
mod test_label;
mod usable;
mod zone_preference;
mod zones;

pub use access_restrictions::AccessRestrictions;
pub use cloud_profile_selector::CloudProfileSelector;
pub use default_domain::DefaultDomain;
pub use emergency_stop::EmergencyStop;
pub use high_availability_zones::HighAvailabilityZones;
pub use max_latency::MaxLatency;
pub use networks::Networks;
pub use provider::Provider;
pub use residency::Residency;
pub use seed_capacity::SeedCapacity;
pub use shoot_selector::ShootSelector;
pub use taints::Taints;
pub use usable::Usable;
pub use zone_preference::ZonePreference;
pub use zones::Zones;

pub use framework::{
    Candidates, FastCheck, Predicate, Prepared, Rejected, SetCheck, SetStep, Stage, Verdict, Why,
};

use crate::config::FilterConfig;
use crate::field_error::FieldError;
use crate::plugin::unsupported_value;

type Builder = fn(&serde_json::Value, &str) -> Result<Box<dyn Predicate>, Vec<FieldError>>;

/// An opt-in filter: its config name, its builder, and example arguments (YAML) with which
/// `tests/fast_path.rs` puts it into generated profiles.
pub type OptIn = (&'static str, Builder, &'static str);

/// Every opt-in filter by its config name.
pub const OPT_IN: &[OptIn] = &[
    (max_latency::NAME, max_latency::build, max_latency::EXAMPLE),
    (residency::NAME, residency::build, residency::EXAMPLE),
];

/// Filters that exist for tests only (the `test-util` feature), configured like the opt-in
/// ones.
#[cfg(any(test, feature = "test-util"))]
const TEST_ONLY: &[OptIn] = &[
    (slow::NAME, slow::build, slow::EXAMPLE),
    (test_label::NAME, test_label::build, test_label::EXAMPLE),
];
#[cfg(not(any(test, feature = "test-util")))]
const TEST_ONLY: &[OptIn] = &[];

/// Every filter configured under `filters` (the test-only ones with `test-util`): its name and
/// example arguments.
pub fn configurable() -> impl Iterator<Item = (&'static str, &'static str)> {
    OPT_IN.iter().chain(TEST_ONLY).map(|(n, _, e)| (*n, *e))
}

/// Builds the configured opt-in filters at `path` (`….filters`); errors carry field paths.
pub fn build_filters(
    configs: &[FilterConfig],
    path: &str,
) -> Result<Vec<Box<dyn Predicate>>, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut built = Vec::new();
    for (i, f) in configs.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if configs[..i].iter().any(|g| g.name == f.name) {
            errors.push(FieldError::new(
                format!("{at}.name"),
                format!("duplicate filter {:?}", f.name),
            ));
        }
        let Some((_, builder, _)) = OPT_IN.iter().chain(TEST_ONLY).find(|(n, ..)| *n == f.name)
        else {
            errors.push(unsupported_value(
                format!("{at}.name"),
                &f.name,
                OPT_IN.iter().map(|(n, ..)| *n),
            ));
            continue;
        };
        match builder(&f.args, &format!("{at}.args")) {
            Ok(p) => built.push(p),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if errors.is_empty() {
        Ok(built)
    } else {
        Err(errors)
    }
}

/// Makes a built-in filter's stage.
type StageBuilder = fn() -> Stage;

/// The filters every profile runs, by name, in upstream order.
pub const BUILT_IN: &[(&str, StageBuilder)] = &[
    (usable::NAME, || Stage::Filter(Box::new(Usable))),
    (cloud_profile_selector::NAME, || {
        Stage::Filter(Box::new(CloudProfileSelector))
    }),
    (shoot_selector::NAME, || {
        Stage::Filter(Box::new(ShootSelector))
    }),
    (provider::NAME, || Stage::Filter(Box::new(Provider))),
    (high_availability_zones::NAME, || {
        Stage::Filter(Box::new(HighAvailabilityZones))
    }),
    (zones::NAME, || Stage::Filter(Box::new(Zones))),
    (zone_preference::NAME, || {
        Stage::Narrow(Box::new(ZonePreference))
    }),
    (access_restrictions::NAME, || {
        Stage::Filter(Box::new(AccessRestrictions))
    }),
    (default_domain::NAME, || {
        Stage::Narrow(Box::new(DefaultDomain))
    }),
    (emergency_stop::NAME, || {
        Stage::Filter(Box::new(EmergencyStop))
    }),
    (networks::NAME, || Stage::Filter(Box::new(Networks))),
    (taints::NAME, || Stage::Filter(Box::new(Taints))),
    (seed_capacity::NAME, || {
        Stage::Filter(Box::new(SeedCapacity))
    }),
];

/// The built-in filtering stages in upstream order, then the opt-in filters, ending with the
/// region strategy.
pub fn pipeline(opt_in: Vec<Box<dyn Predicate>>, region_step: Box<dyn SetStep>) -> Vec<Stage> {
    let mut stages: Vec<Stage> = BUILT_IN.iter().map(|(_, stage)| stage()).collect();
    stages.extend(opt_in.into_iter().map(Stage::Filter));
    stages.push(Stage::Narrow(region_step));
    stages
}

#[cfg(test)]
pub(crate) mod testing {
    use crate::api::{CloudProfile, Seed, Shoot};
    use crate::context::ShootContext;
    use crate::fixtures::CloudProfileBuilder;
    use crate::reason::Reason;
    use crate::snapshot::{SeedInfo, Snapshot};

    use super::Predicate;

    /// Runs one predicate on one shoot/seed pair in a snapshot holding the seed, the given
    /// shoots (usage) and an `aws` CloudProfile (unless `profiles` brings its own).
    pub fn run(
        p: &dyn Predicate,
        shoot: &Shoot,
        seed: &Seed,
        placed: &[Shoot],
        profiles: &[CloudProfile],
    ) -> Result<(), Reason> {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        for cp in profiles {
            snap.upsert_cloud_profile(cp);
        }
        snap.upsert_seed(seed);
        for s in placed {
            snap.upsert_shoot(s);
        }
        let cx = ShootContext::new(shoot, &snap, chrono::Utc::now()).expect("valid shoot");
        let info = SeedInfo::from_seed(seed);
        let state = p.prepare(&cx).expect("the shoot's fields parse");
        p.filter(&cx, &state, &info, &snap)
    }
}
