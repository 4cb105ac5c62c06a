//! `schedulers.shoot.evacuation` and `schedulers.shoot.failback`: when the scheduler process
//! judges a seed unhealthy and healthy again, and where it publishes the plans it keeps for it
//! (docs/operations/evacuation.md).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::field_error::FieldError;
use crate::go_duration::format;

/// `schedulers.shoot.evacuation`: off unless `enabled`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Evacuation {
    /// Whether the leader watches seed health and publishes evacuation and fail-back plans.
    pub enabled: bool,
    /// How long a seed must have been failing before it is judged unhealthy.
    #[serde(with = "crate::go_duration::serde")]
    pub after: Duration,
    /// A `GardenletReady` condition not updated for this long counts as failing (the
    /// gardenlet's heartbeat has stopped).
    #[serde(with = "crate::go_duration::serde")]
    pub heartbeat_timeout: Duration,
    /// How often the seeds are read and judged.
    #[serde(with = "crate::go_duration::serde")]
    pub check_period: Duration,
    /// How often the plan of a seed that stays unhealthy is computed again.
    #[serde(with = "crate::go_duration::serde")]
    pub replan_period: Duration,
    /// The namespace of the ConfigMaps the plans are published in.
    pub namespace: String,
    /// Whether the plans are only published (`manual`) or also carried out by the leader.
    pub mode: Mode,
    /// The limits of `mode: automatic`.
    pub automatic: Automatic,
}

/// `schedulers.shoot.evacuation.mode`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The plan is published; an operator applies it with `plan apply`.
    #[default]
    Manual,
    /// The leader applies the plan itself, within [`Automatic`]'s limits.
    Automatic,
}

/// `schedulers.shoot.evacuation.automatic`: how much the leader moves at once. A move is in
/// flight from its binding until its shoot reports the destination and a finished `Restore`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Automatic {
    /// Control-plane migrations in flight at most, over the whole landscape.
    pub max_moves_in_flight: u32,
    /// Moves started at most within any hour.
    pub max_moves_per_hour: u32,
    /// Migrations in flight at most, in percent of the shoots that have a seed.
    pub max_share_in_flight: u32,
}

impl Default for Automatic {
    fn default() -> Self {
        Self {
            max_moves_in_flight: 2,
            max_moves_per_hour: 10,
            max_share_in_flight: 10,
        }
    }
}

impl Default for Evacuation {
    fn default() -> Self {
        Self {
            enabled: false,
            after: Duration::from_secs(10 * 60),
            heartbeat_timeout: Duration::from_secs(5 * 60),
            check_period: Duration::from_secs(30),
            replan_period: Duration::from_secs(5 * 60),
            namespace: "garden".into(),
            mode: Mode::Manual,
            automatic: Automatic::default(),
        }
    }
}

/// `schedulers.shoot.failback`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Failback {
    /// How long an unhealthy seed must have been healthy again before it is judged healthy.
    #[serde(with = "crate::go_duration::serde")]
    pub after: Duration,
}

impl Default for Failback {
    fn default() -> Self {
        Self {
            after: Duration::from_secs(3600),
        }
    }
}

/// The bounds of `after`, `failback.after` and `heartbeatTimeout`: below a second every blip
/// counts; a week is far beyond any outage one waits out.
const JUDGEMENT: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(7 * 86400));
/// The bounds of `checkPeriod` and `replanPeriod`: a list of seeds (or of the landscape, for a
/// plan) more often than every second is load for nothing; less often than hourly, the
/// judgement lags the seed.
const PERIOD: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(3600));

/// The bounds of `automatic.maxMovesInFlight`: none would never move anything; beyond a few
/// hundred the limit no longer protects the destinations.
const IN_FLIGHT: (u32, u32) = (1, 500);
/// The bounds of `automatic.maxMovesPerHour`.
const PER_HOUR: (u32, u32) = (1, 10_000);
/// The bounds of `automatic.maxShareInFlight`, a percentage.
const SHARE: (u32, u32) = (1, 100);

/// Every problem of the two sections, each with its field path.
pub(super) fn validate(e: &Evacuation, f: &Failback, out: &mut Vec<FieldError>) {
    let within = |path: &str, d: Duration, (min, max): (Duration, Duration), out: &mut Vec<_>| {
        if d < min || d > max {
            out.push(FieldError::new(
                path,
                format!(
                    "must be between {} and {}, got {}",
                    format(min),
                    format(max),
                    format(d)
                ),
            ));
        }
    };
    const AT: &str = "schedulers.shoot.evacuation";
    within(&format!("{AT}.after"), e.after, JUDGEMENT, out);
    within(
        &format!("{AT}.heartbeatTimeout"),
        e.heartbeat_timeout,
        JUDGEMENT,
        out,
    );
    within(&format!("{AT}.checkPeriod"), e.check_period, PERIOD, out);
    within(&format!("{AT}.replanPeriod"), e.replan_period, PERIOD, out);
    within("schedulers.shoot.failback.after", f.after, JUDGEMENT, out);
    if e.namespace.is_empty() {
        out.push(FieldError::new(format!("{AT}.namespace"), "is required"));
    } else if let Err(m) = crate::names::dns1123_label(&e.namespace) {
        out.push(FieldError::new(format!("{AT}.namespace"), m));
    }
    let a = &e.automatic;
    let count = |path: &str, n: u32, (min, max): (u32, u32), out: &mut Vec<_>| {
        if n < min || n > max {
            out.push(FieldError::new(
                format!("{AT}.automatic.{path}"),
                format!("must be between {min} and {max}, got {n}"),
            ));
        }
    };
    count("maxMovesInFlight", a.max_moves_in_flight, IN_FLIGHT, out);
    count("maxMovesPerHour", a.max_moves_per_hour, PER_HOUR, out);
    count("maxShareInFlight", a.max_share_in_flight, SHARE, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(e: Evacuation, f: Failback) -> Vec<String> {
        let mut out = Vec::new();
        validate(&e, &f, &mut out);
        out.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn the_defaults_are_valid() {
        assert!(problems(Evacuation::default(), Failback::default()).is_empty());
    }

    #[test]
    fn every_out_of_range_value_is_named_by_its_path() {
        let e = Evacuation {
            after: Duration::ZERO,
            heartbeat_timeout: Duration::from_secs(8 * 86400),
            check_period: Duration::from_millis(100),
            replan_period: Duration::from_secs(7200),
            namespace: "Not_A_Namespace".into(),
            ..Evacuation::default()
        };
        let got = problems(
            e,
            Failback {
                after: Duration::ZERO,
            },
        );
        let paths: Vec<&str> = got.iter().map(|p| p.split(':').next().unwrap()).collect();
        assert_eq!(
            paths,
            [
                "schedulers.shoot.evacuation.after",
                "schedulers.shoot.evacuation.heartbeatTimeout",
                "schedulers.shoot.evacuation.checkPeriod",
                "schedulers.shoot.evacuation.replanPeriod",
                "schedulers.shoot.failback.after",
                "schedulers.shoot.evacuation.namespace",
            ],
            "{got:#?}"
        );
        assert!(
            got[0].contains("must be between 1s and 168h0m0s, got 0s"),
            "{}",
            got[0]
        );
    }

    #[test]
    fn automatic_limits_out_of_range_are_named_by_their_path() {
        let e = Evacuation {
            mode: Mode::Automatic,
            automatic: Automatic {
                max_moves_in_flight: 0,
                max_moves_per_hour: 10_001,
                max_share_in_flight: 101,
            },
            ..Evacuation::default()
        };
        assert_eq!(
            problems(e, Failback::default()),
            [
                "schedulers.shoot.evacuation.automatic.maxMovesInFlight: must be between 1 and \
                 500, got 0",
                "schedulers.shoot.evacuation.automatic.maxMovesPerHour: must be between 1 and \
                 10000, got 10001",
                "schedulers.shoot.evacuation.automatic.maxShareInFlight: must be between 1 and \
                 100, got 101",
            ]
        );
    }

    #[test]
    fn the_mode_reads_manual_or_automatic_and_defaults_to_manual() {
        let e: Evacuation = serde_json::from_str(r#"{"mode": "automatic"}"#).unwrap();
        assert_eq!(e.mode, Mode::Automatic);
        assert_eq!(e.automatic, Automatic::default());
        assert_eq!(Evacuation::default().mode, Mode::Manual);
        let wrong = serde_json::from_str::<Evacuation>(r#"{"mode": "auto"}"#).unwrap_err();
        assert!(wrong.to_string().contains("manual"), "{wrong}");
    }

    #[test]
    fn an_empty_namespace_is_required() {
        let e = Evacuation {
            namespace: String::new(),
            ..Evacuation::default()
        };
        assert_eq!(
            problems(e, Failback::default()),
            ["schedulers.shoot.evacuation.namespace: is required"]
        );
    }
}
