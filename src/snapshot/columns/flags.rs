//! Properties of a seed that let a stage keep it without asking, one bit each, computed once
//! per seed when the columns are built.

use crate::snapshot::{SeedInfo, ZoneMode};

pub const USABLE: u8 = 1;
pub const NO_EMERGENCY_STOP: u8 = 1 << 1;
pub const NO_TAINTS: u8 = 1 << 2;
pub const THREE_ZONES: u8 = 1 << 3;
pub const ZONES_NOT_ENFORCED: u8 = 1 << 4;
pub const PLAIN_NETWORK_DEFAULTS: u8 = 1 << 5;
/// The seed does not prefer zones (`ZonePreference` keeps it whatever the workers' zones).
pub const NO_ZONE_PREFERENCE: u8 = 1 << 6;

pub(super) fn of(s: &SeedInfo, plain_network_defaults: bool) -> u8 {
    let mut f = 0;
    for (set, bit) in [
        (s.usable.is_ok(), USABLE),
        (!s.emergency_stop, NO_EMERGENCY_STOP),
        (s.taints.is_empty(), NO_TAINTS),
        (s.zones.len() >= 3, THREE_ZONES),
        (s.zone_mode != ZoneMode::Enforce, ZONES_NOT_ENFORCED),
        (plain_network_defaults, PLAIN_NETWORK_DEFAULTS),
        (s.zone_mode != ZoneMode::Prefer, NO_ZONE_PREFERENCE),
    ] {
        if set {
            f |= bit;
        }
    }
    f
}
