//! Carbon-intensity ConfigMaps as the feed reports them: the carbon metrics recomputed when one
//! changes or goes, once every kind has been listed.

use chrono::Utc;
use tracing::info;

use crate::controller::shared::Shared;

/// Recomputes the carbon report and updates the metrics. Does nothing when no profile uses
/// `CarbonIntensity`, or before every cache has synced (a half-listed landscape would report
/// every location as missing and log warnings that are not true).
pub(in crate::controller) fn refresh(shared: &Shared) {
    let Some(settings) = &shared.carbon else {
        return;
    };
    if !shared.unsynced().is_empty() {
        return;
    }
    let report = settings.report(&shared.lock().snapshot, Utc::now());
    shared.metrics.carbon.update(&report);
}

/// A carbon-intensity ConfigMap was deleted: said once, because its data silently keeps
/// counting for the grace period and then silently stops.
pub(in crate::controller) fn deleted(shared: &Shared, key: &str) {
    if let Some(settings) = &shared.carbon {
        info!(config_map = %key, grace = %crate::carbon::format_age(settings.removal_grace),
              "carbon-intensity ConfigMap deleted; its data keeps counting for the grace period");
    }
    refresh(shared);
}
