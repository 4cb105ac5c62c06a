//! `ResourceFit`'s per-seed numbers: what the shoots on each seed demand of each scored
//! resource, kept by the snapshot's columns as usage changes, not priced per decision.

use std::any::Any;

use crate::snapshot::SeedUsage;
use crate::snapshot::columns::UsageColumn;

/// Per seed and resource, what the seed's shoots demand when one shoot of demand class `c`
/// demands `prices[c * n + resource]` of the `n` scored resources.
#[derive(Debug)]
pub(super) struct PricedUsage {
    pub n: usize,
    pub prices: Vec<f64>,
}

impl UsageColumn for PricedUsage {
    fn width(&self) -> usize {
        self.n
    }

    /// Per resource, the seed's shoots' demand summed class by class (from -0.0 when it has
    /// shoots, as an empty sum; classes without shoots left out). `false` when the seed has a
    /// class the prices do not cover.
    fn derive(&self, usage: &SeedUsage, out: &mut [f64]) -> bool {
        let n = self.n;
        out.fill(if usage.shoots == 0 { 0.0 } else { -0.0 });
        if usage.shoots == 0 {
            return true;
        }
        for (class, count) in usage.by_class() {
            let Some(row) = self.prices.get(class * n..(class + 1) * n) else {
                return false;
            };
            for (u, p) in out.iter_mut().zip(row) {
                *u += f64::from(count) * p;
            }
        }
        true
    }

    /// The same pricing: the same resources and every price equal bit for bit.
    fn same(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<Self>().is_some_and(|o| {
            o.n == self.n
                && o.prices.len() == self.prices.len()
                && o.prices
                    .iter()
                    .zip(&self.prices)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
        })
    }
}
