//! When each move runs: inside the shoot's own `spec.maintenance.timeWindow` (its next
//! occurrence after `now`), with at most `max_concurrent` moves overlapping on any one source or
//! destination seed. A move without a slot before `now + horizon` is deferred.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound::Excluded;

use chrono::{DateTime, Duration, FixedOffset, NaiveTime, TimeZone, Utc};
use serde::Serialize;

use super::Move;

/// The shoot's window could not be read.
#[derive(Debug, thiserror::Error)]
#[error("shoot {shoot}: spec.maintenance.timeWindow.{field}: {message}")]
pub struct WindowError {
    pub shoot: String,
    pub field: &'static str,
    pub message: String,
}

/// How start times are chosen.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub horizon_seconds: i64,
    pub max_concurrent: usize,
    pub move_duration_seconds: i64,
}

impl Settings {
    fn horizon(&self) -> Duration {
        Duration::seconds(self.horizon_seconds)
    }
    fn duration(&self) -> Duration {
        Duration::seconds(self.move_duration_seconds)
    }
}

/// A daily window in a fixed UTC offset, as Gardener writes it (`220000+0100`).
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub begin: NaiveTime,
    pub end: NaiveTime,
    pub offset: FixedOffset,
    /// Written in the manifest, or assumed because the shoot has none.
    pub assumed: bool,
}

impl Window {
    /// `begin-end` as in the manifest.
    pub fn label(&self) -> String {
        let off = self.offset.local_minus_utc() / 60;
        let sign = if off < 0 { '-' } else { '+' };
        let off = off.abs();
        format!(
            "{}-{}{}{:02}{:02}{}",
            self.begin.format("%H%M%S"),
            self.end.format("%H%M%S"),
            sign,
            off / 60,
            off % 60,
            if self.assumed { " (assumed)" } else { "" }
        )
    }

    /// Occurrences `[begin, end)` in UTC whose end is after `from`, earliest first.
    pub fn occurrences(
        &self,
        from: DateTime<Utc>,
    ) -> impl Iterator<Item = (DateTime<Utc>, DateTime<Utc>)> + '_ {
        let local_day = from.with_timezone(&self.offset).date_naive() - Duration::days(1);
        let span = if self.end > self.begin {
            self.end - self.begin
        } else {
            self.end - self.begin + Duration::days(1)
        };
        (0..)
            .map(move |d| {
                let day = local_day + Duration::days(d);
                let begin = self
                    .offset
                    .from_local_datetime(&day.and_time(self.begin))
                    .single()
                    .expect("a fixed offset maps every local time once")
                    .to_utc();
                (begin, begin + span)
            })
            .filter(move |(_, end)| *end > from)
    }
}

/// Parses `HHMMSS+ZZZZ` (Gardener's maintenance time format).
pub fn parse_time(s: &str) -> Result<(NaiveTime, FixedOffset), String> {
    let bad = || format!("{s:?} is not HHMMSS+ZZZZ (e.g. 220000+0100)");
    if s.len() != 11 || !s.is_ascii() {
        return Err(bad());
    }
    // chrono reads second 60 as a leap second; Gardener's format has none.
    if s[4..6].parse::<u32>().map_or(true, |sec| sec > 59) {
        return Err(bad());
    }
    let time = NaiveTime::parse_from_str(&s[..6], "%H%M%S").map_err(|_| bad())?;
    let sign = match &s[6..7] {
        "+" => 1,
        "-" => -1,
        _ => return Err(bad()),
    };
    let hh: i32 = s[7..9].parse().map_err(|_| bad())?;
    let mm: i32 = s[9..11].parse().map_err(|_| bad())?;
    if hh > 14 || mm > 59 {
        return Err(bad());
    }
    let offset = FixedOffset::east_opt(sign * (hh * 3600 + mm * 60)).ok_or_else(bad)?;
    Ok((time, offset))
}

/// The shoot's window from its manifest document, or, when it has none, a one-hour window
/// starting at a stable hour between 22:00 and 05:00 UTC derived from the shoot's name (Gardener
/// defaults every shoot to a window in the night; the stand-in is marked as assumed).
pub fn window_of(shoot: &str, doc: Option<&serde_yaml_ng::Value>) -> Result<Window, WindowError> {
    let tw = doc
        .and_then(|d| d.get("spec"))
        .and_then(|s| s.get("maintenance"))
        .and_then(|m| m.get("timeWindow"));
    let Some(tw) = tw.filter(|v| !v.is_null()) else {
        let hour = (22 + xxhash_rust::xxh3::xxh3_64(shoot.as_bytes()) % 8) % 24;
        let begin = NaiveTime::from_hms_opt(hour as u32, 0, 0).expect("hour below 24");
        return Ok(Window {
            begin,
            end: begin + Duration::hours(1),
            offset: FixedOffset::east_opt(0).expect("UTC"),
            assumed: true,
        });
    };
    let field = |name: &'static str| -> Result<(NaiveTime, FixedOffset), WindowError> {
        let err = |message: String| WindowError {
            shoot: shoot.to_string(),
            field: name,
            message,
        };
        let v = tw
            .get(name)
            .ok_or_else(|| err("is required".into()))?
            .as_str()
            .ok_or_else(|| err("must be a string".into()))?;
        parse_time(v).map_err(err)
    };
    let (begin, offset) = field("begin")?;
    let (end, end_offset) = field("end")?;
    // Upstream compares both in UTC; convert the end into the begin's offset.
    let shift = Duration::seconds(i64::from(
        offset.local_minus_utc() - end_offset.local_minus_utc(),
    ));
    let end = end + shift;
    if end == begin {
        return Err(WindowError {
            shoot: shoot.to_string(),
            field: "end",
            message: "equals begin: the window is empty".into(),
        });
    }
    Ok(Window {
        begin,
        end,
        offset,
        assumed: false,
    })
}

/// RFC 3339 in UTC with seconds, as the rest of the output writes instants.
pub(crate) fn rfc3339<S: serde::Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// When a move runs, or why not yet.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum Timing {
    /// Not scheduled yet (before [`assign`]).
    Unscheduled,
    At {
        #[serde(serialize_with = "rfc3339")]
        start: DateTime<Utc>,
        #[serde(serialize_with = "rfc3339")]
        end: DateTime<Utc>,
        window: String,
    },
    Deferred {
        window: String,
        reason: String,
    },
}

/// Start times of the planned moves per seed, with how many start at each instant. Every move
/// lasts the same `duration`, so `[b, b + d)` overlaps `[s, s + d)` exactly when `s - d < b < s + d`:
/// one range query per check instead of a scan of every planned move.
#[derive(Default)]
struct Busy(HashMap<String, BTreeMap<DateTime<Utc>, usize>>);

impl Busy {
    fn overlapping(&self, seed: &str, s: DateTime<Utc>, duration: Duration) -> usize {
        self.0.get(seed).map_or(0, |starts| {
            starts
                .range((Excluded(s - duration), Excluded(s + duration)))
                .map(|(_, n)| n)
                .sum()
        })
    }

    /// Ends of moves on `seed` strictly inside `(after, before)`.
    fn ends_within(
        &self,
        seed: &str,
        after: DateTime<Utc>,
        before: DateTime<Utc>,
        duration: Duration,
    ) -> impl Iterator<Item = DateTime<Utc>> + '_ {
        self.0
            .get(seed)
            .into_iter()
            .flat_map(move |starts| {
                starts.range((Excluded(after - duration), Excluded(before - duration)))
            })
            .map(move |(b, _)| *b + duration)
    }

    fn add(&mut self, seed: &str, start: DateTime<Utc>) {
        *self
            .0
            .entry(seed.to_string())
            .or_default()
            .entry(start)
            .or_default() += 1;
    }
}

/// A seed's load before the plan and its `allocatable.shoots`, for the slot order of the moves.
#[derive(Clone, Copy, Debug)]
pub struct Room {
    pub load: u64,
    pub capacity: Option<u64>,
}

/// For every move (decision order), the moves off its destination it must wait for: when the
/// destination had no free slot for it without earlier moves leaving, it may start only once
/// `need` of the earlier moves off that seed have ended (`need` = the slots it lacks). With
/// this, a seed never hosts more control planes than its capacity at any instant, whatever
/// order the windows put the moves in: at any time, the started move onto the seed with the
/// highest decision index waited for enough departures to cover every started arrival.
fn slot_dependencies(
    moves: &[Move],
    rooms: &dyn Fn(&str) -> Option<Room>,
) -> Vec<(usize, Vec<usize>)> {
    let mut arrivals: HashMap<&str, u64> = HashMap::new();
    let mut departures: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut deps = Vec::with_capacity(moves.len());
    for (i, m) in moves.iter().enumerate() {
        let arrived = arrivals.entry(m.to.as_str()).or_default();
        *arrived += 1;
        let need = match rooms(&m.to) {
            Some(Room {
                load,
                capacity: Some(cap),
            }) => (load + *arrived).saturating_sub(cap) as usize,
            _ => 0,
        };
        let before = if need > 0 {
            departures.get(m.to.as_str()).cloned().unwrap_or_default()
        } else {
            Vec::new()
        };
        deps.push((need, before));
        departures.entry(m.from.as_str()).or_default().push(i);
    }
    deps
}

/// Gives every move a start time. Moves are taken in order of their window's next occurrence
/// (then shoot name); each takes the earliest instant inside one of its window occurrences where
/// the whole move fits in the occurrence, fewer than `max_concurrent` scheduled moves overlap it
/// on its source and on its destination, and — when its destination is full without earlier
/// moves leaving it — after enough of those departures have ended (see `slot_dependencies`).
/// `rooms` gives each seed's load before the plan and its capacity.
pub fn assign(
    moves: &mut [Move],
    windows: &[Window],
    settings: &Settings,
    now: DateTime<Utc>,
    rooms: &dyn Fn(&str) -> Option<Room>,
) {
    assert_eq!(moves.len(), windows.len());
    let limit = now + settings.horizon();
    let mut order: Vec<usize> = (0..moves.len()).collect();
    let first = |i: usize| windows[i].occurrences(now).next().map(|(b, _)| b.max(now));
    order.sort_by_cached_key(|&i| (first(i), moves[i].shoot.clone()));
    let deps = slot_dependencies(moves, rooms);
    let mut busy = Busy::default();
    let mut stack = Vec::new();
    for root in order {
        stack.push(root);
        while let Some(&i) = stack.last() {
            if !matches!(moves[i].timing, Timing::Unscheduled) {
                stack.pop();
                continue;
            }
            let (need, before) = &deps[i];
            if let Some(&j) = before
                .iter()
                .find(|&&j| matches!(moves[j].timing, Timing::Unscheduled))
            {
                stack.push(j);
                continue;
            }
            stack.pop();
            let not_before = if *need > 0 {
                let mut ends: Vec<DateTime<Utc>> = before
                    .iter()
                    .filter_map(|&j| match moves[j].timing {
                        Timing::At { end, .. } => Some(end),
                        _ => None,
                    })
                    .collect();
                ends.sort();
                match ends.get(need - 1) {
                    Some(t) => Some(*t),
                    None => {
                        moves[i].timing = Timing::Deferred {
                            window: windows[i].label(),
                            reason: format!(
                                "{} has no free slot for it until {} earlier move(s) off it have \
                                 ended, and only {} of them are scheduled",
                                moves[i].to,
                                need,
                                ends.len()
                            ),
                        };
                        continue;
                    }
                }
            } else {
                None
            };
            moves[i].timing = place(
                &moves[i],
                &windows[i],
                &mut busy,
                settings,
                now,
                limit,
                not_before,
            );
        }
    }
}

/// The earliest start of one move, or why it is deferred; the start is recorded in `busy`.
fn place(
    m: &Move,
    w: &Window,
    busy: &mut Busy,
    settings: &Settings,
    now: DateTime<Utc>,
    limit: DateTime<Utc>,
    not_before: Option<DateTime<Utc>>,
) -> Timing {
    let duration = settings.duration();
    let earliest = not_before.map_or(now, |t| t.max(now));
    let (from, to) = (m.from.as_str(), m.to.as_str());
    let mut full = false;
    let mut chosen = None;
    for (begin, end) in w.occurrences(earliest) {
        if begin >= limit {
            break;
        }
        let open = begin.max(earliest);
        let mut candidates = vec![open];
        for seed in [from, to] {
            candidates.extend(busy.ends_within(seed, open, end, duration));
        }
        candidates.sort();
        candidates.dedup();
        for s in candidates {
            if s + duration > end || s + duration > limit {
                continue;
            }
            if busy.overlapping(from, s, duration) < settings.max_concurrent
                && busy.overlapping(to, s, duration) < settings.max_concurrent
            {
                chosen = Some(s);
                break;
            }
            full = true;
        }
        if chosen.is_some() {
            break;
        }
    }
    match chosen {
        Some(start) => {
            busy.add(from, start);
            busy.add(to, start);
            Timing::At {
                start,
                end: start + duration,
                window: w.label(),
            }
        }
        None => Timing::Deferred {
            window: w.label(),
            reason: if full {
                format!(
                    "every slot of its window before the horizon already has {} overlapping \
                     move(s) on {} or {}",
                    settings.max_concurrent, m.from, m.to
                )
            } else if not_before.is_some_and(|t| t > now) {
                format!(
                    "no occurrence of its window after the moves that free its slot on {} \
                     leaves {} for the move before the horizon",
                    m.to,
                    humantime_short(duration)
                )
            } else {
                format!(
                    "no occurrence of its window leaves {} for the move before the horizon",
                    humantime_short(duration)
                )
            },
        },
    }
}

fn humantime_short(d: Duration) -> String {
    let m = d.num_minutes();
    if m % 60 == 0 {
        format!("{}h", m / 60)
    } else {
        format!("{m}m")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    #[test]
    fn parses_gardener_times_and_rejects_others() {
        let (time, off) = parse_time("220000+0100").unwrap();
        assert_eq!(time, NaiveTime::from_hms_opt(22, 0, 0).unwrap());
        assert_eq!(off.local_minus_utc(), 3600);
        for bad in [
            "22:00",
            "220000",
            "250000+0000",
            "220000*0100",
            "220000+2500",
            "225960+0000",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn occurrences_cross_midnight_and_start_after_now() {
        let w = Window {
            begin: NaiveTime::from_hms_opt(23, 0, 0).unwrap(),
            end: NaiveTime::from_hms_opt(1, 0, 0).unwrap(),
            offset: FixedOffset::east_opt(3600).unwrap(),
            assumed: false,
        };
        let mut occ = w.occurrences(t("2026-12-01T12:00:00Z"));
        assert_eq!(
            occ.next().unwrap(),
            (t("2026-12-01T22:00:00Z"), t("2026-12-02T00:00:00Z"))
        );
        // Inside a window: that occurrence still counts.
        let mut occ = w.occurrences(t("2026-12-01T23:30:00Z"));
        assert_eq!(occ.next().unwrap().0, t("2026-12-01T22:00:00Z"));
    }

    #[test]
    fn window_errors_name_the_field() {
        let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(
            "spec: {maintenance: {timeWindow: {begin: '220000+0100', end: 'late'}}}",
        )
        .unwrap();
        let e = window_of("ns/a", Some(&doc)).unwrap_err();
        assert_eq!(e.field, "end");
        assert!(
            e.to_string().contains("spec.maintenance.timeWindow.end"),
            "{e}"
        );
    }

    fn mv(shoot: &str, from: &str, to: &str) -> Move {
        Move {
            shoot: shoot.into(),
            index: 0,
            from: from.into(),
            to: to.into(),
            score: 0.0,
            reason: String::new(),
            explanation: String::new(),
            warnings: Vec::new(),
            migration: crate::plan::migration::Migration {
                kind: crate::plan::migration::Kind::Classic,
                not_live: Vec::new(),
            },
            gain: None,
            timing: Timing::Unscheduled,
        }
    }

    fn window(begin: u32, end: u32) -> Window {
        Window {
            begin: NaiveTime::from_hms_opt(begin, 0, 0).unwrap(),
            end: NaiveTime::from_hms_opt(end, 0, 0).unwrap(),
            offset: FixedOffset::east_opt(0).unwrap(),
            assumed: false,
        }
    }

    #[test]
    fn an_arrival_waiting_for_a_deferred_departure_is_deferred_too() {
        // eu is full; a leaves it in a window past the horizon, b arrives in an early window.
        let mut moves = vec![mv("a", "eu", "ap"), mv("b", "ap", "eu")];
        let windows = [window(23, 0), window(13, 14)];
        let settings = Settings {
            horizon_seconds: 6 * 3600,
            max_concurrent: 2,
            move_duration_seconds: 1800,
        };
        let rooms = |seed: &str| {
            Some(Room {
                load: if seed == "eu" { 1 } else { 0 },
                capacity: Some(1),
            })
        };
        assign(
            &mut moves,
            &windows,
            &settings,
            t("2026-12-01T12:00:00Z"),
            &rooms,
        );
        assert!(
            matches!(moves[0].timing, Timing::Deferred { .. }),
            "{:?}",
            moves[0]
        );
        match &moves[1].timing {
            Timing::Deferred { reason, .. } => assert!(
                reason.contains("eu has no free slot for it until 1 earlier move(s) off it"),
                "{reason}"
            ),
            other => panic!("b would overcommit eu: {other:?}"),
        }
    }

    #[test]
    fn a_year_of_windows_for_thousands_of_moves_on_one_seed_pair_is_assigned() {
        // Its cost is measured by `cargo bench --bench plan` (the `--max-concurrent 1 --horizon
        // 8760h` rows of docs/performance.md section 8), not timed here.
        let n = 3000;
        let mut moves: Vec<Move> = (0..n).map(|i| mv(&format!("s{i:04}"), "a", "b")).collect();
        let windows = vec![window(22, 23); n];
        let settings = Settings {
            horizon_seconds: 8760 * 3600,
            max_concurrent: 1,
            move_duration_seconds: 1800,
        };
        assign(
            &mut moves,
            &windows,
            &settings,
            t("2026-12-01T12:00:00Z"),
            &|_| None,
        );
        // Two moves a night: 3,000 moves take 1,500 nights, past the year's horizon.
        let scheduled = moves
            .iter()
            .filter(|m| matches!(m.timing, Timing::At { .. }))
            .count();
        assert_eq!(scheduled, 2 * 365, "{:?}", moves[730].timing);
    }
}
