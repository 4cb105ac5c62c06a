//! Leaf vocabulary: how long one decision may take. The scheduler process gives every
//! decision a [`Deadline`] (`schedulers.shoot.decisionBudget`); the pipeline looks at it after
//! each stage and every few seeds of a stage that asks its filter per seed, and gives up with
//! [`FitError::OverBudget`] once it has passed. Offline commands decide without one.
//!
//! [`Deadline`]: crate::budget::Deadline
//! [`FitError::OverBudget`]: crate::outcome::FitError::OverBudget

use std::time::{Duration, Instant};

use crate::outcome::FitError;

/// When a decision gives up: a point in time, or never.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    at: Option<Instant>,
    budget: Duration,
}

impl Deadline {
    /// No limit: the offline commands and the benches.
    pub const NONE: Deadline = Deadline {
        at: None,
        budget: Duration::ZERO,
    };

    /// `budget` from now.
    pub fn after(budget: Duration) -> Deadline {
        Deadline {
            at: Instant::now().checked_add(budget),
            budget,
        }
    }

    /// `Err` once the deadline has passed, naming the stage the decision was in.
    #[inline]
    pub fn check(&self, stage: &'static str) -> Result<(), FitError> {
        match self.at {
            Some(at) if Instant::now() >= at => Err(FitError::OverBudget {
                budget_ms: self.budget.as_millis() as u64,
                stage,
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_deadline_never_passes_and_a_zero_budget_has_passed() {
        assert!(Deadline::NONE.check("Usable").is_ok());
        let err = Deadline::after(Duration::ZERO).check("Zones").unwrap_err();
        assert_eq!(
            err,
            FitError::OverBudget {
                budget_ms: 0,
                stage: "Zones"
            }
        );
        assert!(
            Deadline::after(Duration::from_secs(60))
                .check("Zones")
                .is_ok()
        );
    }
}
