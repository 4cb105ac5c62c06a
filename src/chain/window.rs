//! When a profile entry is active: an optional `between` range and an optional cron-started
//! period in a time zone.

use std::str::FromStr;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

use crate::config::ScheduleConfig;
use crate::field_error::FieldError;

/// A cron-started period: each fire opens a window of `duration` (or until the next fire).
#[derive(Clone, Debug)]
pub struct ActivePeriod {
    pub cron: Cron,
    pub tz: Tz,
    pub duration: Option<Duration>,
}

#[derive(Clone, Debug, Default)]
pub struct Window {
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
    pub period: Option<ActivePeriod>,
}

impl Window {
    /// Parses and validates a `schedule`; every problem is reported with its path.
    pub fn from_config(cfg: &ScheduleConfig, path: &str) -> Result<Window, Vec<FieldError>> {
        let mut errors = Vec::new();
        let mut w = Window::default();
        if let Some(b) = &cfg.between {
            w.start = parse_time(
                b.start.as_deref(),
                &format!("{path}.between.start"),
                &mut errors,
            );
            w.end = parse_time(
                b.end.as_deref(),
                &format!("{path}.between.end"),
                &mut errors,
            );
            if let (Some(s), Some(e)) = (w.start, w.end)
                && e <= s
            {
                errors.push(FieldError::new(
                    format!("{path}.between.end"),
                    format!("must be after between.start ({} <= {})", fmt(e), fmt(s)),
                ));
            }
        }
        if let Some(ap) = &cfg.active_period {
            let p = format!("{path}.activePeriod");
            let tz = match ap.timezone.as_deref() {
                None | Some("") => Some(Tz::UTC),
                Some(name) => match Tz::from_str(name) {
                    Ok(tz) => Some(tz),
                    Err(_) => {
                        errors.push(FieldError::new(
                            format!("{p}.timezone"),
                            format!("unknown time zone {name:?}: use an IANA name such as \"Europe/Berlin\""),
                        ));
                        None
                    }
                },
            };
            let duration = match ap.duration.as_deref() {
                None => None,
                Some(d) => match crate::go_duration::parse_with_days(d) {
                    Ok(d) if !d.is_zero() => Duration::from_std(d).ok(),
                    Ok(_) => {
                        errors.push(FieldError::new(format!("{p}.duration"), "must be positive"));
                        None
                    }
                    Err(e) => {
                        errors.push(FieldError::new(format!("{p}.duration"), e.to_string()));
                        None
                    }
                },
            };
            match ap.start_cron.as_deref() {
                None => {
                    if ap.duration.is_some() || ap.timezone.is_some() {
                        errors.push(FieldError::new(
                            format!("{p}.startCron"),
                            "is required when timezone or duration is set",
                        ));
                    }
                }
                Some(expr) => match parse_cron(expr) {
                    Ok(cron) => {
                        if let Some(tz) = tz {
                            w.period = Some(ActivePeriod { cron, tz, duration });
                        }
                    }
                    Err(msg) => errors.push(FieldError::new(format!("{p}.startCron"), msg)),
                },
            }
        }
        if errors.is_empty() {
            Ok(w)
        } else {
            Err(errors)
        }
    }

    /// Is the window open at `t`? Start inclusive, end exclusive; with a cron, the last fire at
    /// or before `t` must still be within its duration.
    pub fn is_active(&self, t: DateTime<Utc>) -> bool {
        if self.start.is_some_and(|s| t < s) || self.end.is_some_and(|e| t >= e) {
            return false;
        }
        let Some(p) = &self.period else {
            return true;
        };
        match last_fire(p, t) {
            None => false,
            Some(fire) => p.duration.is_none_or(|d| t < fire + d),
        }
    }

    /// The next instant after `t` at which `is_active` may change.
    pub fn next_transition(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let mut candidates: Vec<DateTime<Utc>> = Vec::new();
        candidates.extend(self.start.filter(|s| *s > t));
        candidates.extend(self.end.filter(|e| *e > t));
        if let Some(p) = &self.period {
            candidates.extend(next_fire(p, t));
            if let (Some(fire), Some(d)) = (last_fire(p, t), p.duration) {
                candidates.extend(Some(fire + d).filter(|x| *x > t));
            }
        }
        candidates.into_iter().min()
    }

    /// While active at `t`: when it closes (None if it never does within the search horizon).
    pub fn closes_at(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let mut at = t;
        for _ in 0..1000 {
            at = self.next_transition(at)?;
            if !self.is_active(at) {
                return Some(at);
            }
        }
        None
    }
}

fn parse_time(v: Option<&str>, path: &str, errors: &mut Vec<FieldError>) -> Option<DateTime<Utc>> {
    let v = v?;
    match DateTime::parse_from_rfc3339(v) {
        Ok(t) => Some(t.to_utc()),
        Err(e) => {
            errors.push(FieldError::new(
                path,
                format!("{v:?} is not an RFC 3339 timestamp with an explicit offset or Z: {e}"),
            ));
            None
        }
    }
}

/// Standard 5-field cron or a descriptor; zone prefixes are refused (use `timezone`).
pub fn parse_cron(expr: &str) -> Result<Cron, String> {
    let trimmed = expr.trim();
    if trimmed.starts_with("CRON_TZ=") || trimmed.starts_with("TZ=") {
        return Err(format!(
            "{expr:?}: a CRON_TZ=/TZ= prefix is not supported: set activePeriod.timezone instead"
        ));
    }
    if !trimmed.starts_with('@') && trimmed.split_whitespace().count() != 5 {
        return Err(format!(
            "{expr:?}: expected 5 fields (minute hour day-of-month month day-of-week) or a descriptor such as @daily"
        ));
    }
    let cron = CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
        .parse(trimmed)
        .map_err(|e| format!("{expr:?}: {e}"))?;
    // The calendar repeats every 28 years (leap years and weekdays), so an expression that
    // does not fire within that from any instant never does (`0 0 31 2 *`).
    let from = DateTime::<Utc>::UNIX_EPOCH;
    match cron.find_next_occurrence(&from, false) {
        Ok(t) if t < from + Duration::days(366 * 29) => Ok(cron),
        _ => Err(format!(
            "{expr:?}: never fires: no date matches every field"
        )),
    }
}

fn last_fire(p: &ActivePeriod, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
    p.cron
        .find_previous_occurrence(&t.with_timezone(&p.tz), true)
        .ok()
        .map(|f| f.to_utc())
}

fn next_fire(p: &ActivePeriod, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
    p.cron
        .find_next_occurrence(&t.with_timezone(&p.tz), false)
        .ok()
        .map(|f| f.to_utc())
}

pub fn fmt(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
