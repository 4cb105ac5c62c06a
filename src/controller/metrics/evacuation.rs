//! The seed-evacuation gauges. The controller registers them with its other metrics; the
//! evacuation loop (`crate::evacuation`), which runs beside the controller, sets them.

use std::sync::atomic::AtomicI64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SeedLabels {
    pub seed: String,
}

/// The `result` of a move the automatic evacuation bound.
pub const MOVE_STARTED: &str = "started";
/// The `result` of a move no longer possible when checked again before its binding.
pub const MOVE_REFUSED: &str = "refused";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct MoveLabels {
    /// The seed the shoot leaves.
    pub seed: String,
    /// `started`, or `refused` (checked again before its binding and no longer possible).
    pub result: String,
}

/// `gardener_scheduler_seed_evacuation_ready{seed}`,
/// `gardener_scheduler_seed_failback_ready{seed}` and
/// `gardener_scheduler_seed_evacuation_moves_total{seed,result}`: leader only.
#[derive(Clone, Default)]
pub struct EvacuationMetrics {
    ready: Family<SeedLabels, Gauge<i64, AtomicI64>>,
    failback_ready: Family<SeedLabels, Gauge<i64, AtomicI64>>,
    moves: Family<MoveLabels, Counter>,
}

impl EvacuationMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        let m = EvacuationMetrics::default();
        registry.register(
            "seed_evacuation_ready",
            "1 while a seed is judged unhealthy and its evacuation plan is published (schedulers.shoot.evacuation; docs/operations/evacuation.md); served by the leader only",
            m.ready.clone(),
        );
        registry.register(
            "seed_failback_ready",
            "1 while a seed that was judged unhealthy is healthy again and its fail-back plan is published; served by the leader only",
            m.failback_ready.clone(),
        );
        registry.register(
            "seed_evacuation_moves",
            "Moves of the automatic evacuation (schedulers.shoot.evacuation.mode: automatic) by the seed left and result: started (bound), refused (no longer possible when checked again before the binding)",
            m.moves.clone(),
        );
        m
    }

    /// One move of the automatic evacuation off `seed`: `started` or `refused`.
    pub fn count_move(&self, seed: &str, result: &str) {
        self.moves
            .get_or_create(&MoveLabels {
                seed: seed.into(),
                result: result.into(),
            })
            .inc();
    }

    /// Whether `seed`'s evacuation plan is published.
    pub fn set_ready(&self, seed: &str, on: bool) {
        set(&self.ready, seed, on);
    }

    /// With `mode: automatic`, both move series of a judged seed are served from 0: a counter
    /// that first appears at 1 shows no `increase()`, so the first refused move would not raise
    /// `GardenerSchedulerEvacuationMovesRefused`.
    pub fn serve_moves(&self, seed: &str) {
        for labels in move_labels(seed) {
            // created at 0; the guard is not kept
            let _ = self.moves.get_or_create(&labels);
        }
    }

    /// Whether `seed`'s fail-back plan is published.
    pub fn set_failback_ready(&self, seed: &str, on: bool) {
        set(&self.failback_ready, seed, on);
    }

    /// Every series removed: the seed is gone, or this process no longer leads.
    pub fn forget(&self, seed: &str) {
        let labels = SeedLabels { seed: seed.into() };
        self.ready.remove(&labels);
        self.failback_ready.remove(&labels);
        for labels in move_labels(seed) {
            self.moves.remove(&labels);
        }
    }
}

/// The labels of both move series of `seed`.
fn move_labels(seed: &str) -> [MoveLabels; 2] {
    [MOVE_STARTED, MOVE_REFUSED].map(|result| MoveLabels {
        seed: seed.into(),
        result: result.into(),
    })
}

fn set(family: &Family<SeedLabels, Gauge<i64, AtomicI64>>, seed: &str, on: bool) {
    family
        .get_or_create(&SeedLabels { seed: seed.into() })
        .set(i64::from(on));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(registry: &Registry) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, registry).unwrap();
        out
    }

    #[test]
    fn a_judged_seed_serves_both_move_series_from_zero() {
        let mut registry = Registry::with_prefix("gardener_scheduler");
        let m = EvacuationMetrics::register(&mut registry);
        m.set_ready("aws-eu1", false);
        assert!(!encode(&registry).contains("moves_total{"));
        m.serve_moves("aws-eu1");
        let text = encode(&registry);
        for result in ["started", "refused"] {
            let series = format!(
                "gardener_scheduler_seed_evacuation_moves_total{{seed=\"aws-eu1\",result=\"{result}\"}} 0"
            );
            assert!(text.contains(&series), "{series} in {text}");
        }
        m.count_move("aws-eu1", MOVE_REFUSED);
        assert!(encode(&registry).contains(
            "gardener_scheduler_seed_evacuation_moves_total{seed=\"aws-eu1\",result=\"refused\"} 1"
        ));
        m.forget("aws-eu1");
        assert!(!encode(&registry).contains("moves_total{"));
    }
}
