//! Completed latency tables: the known region pairs of a latency source, with every missing pair
//! filled in once, when the source changes, so that a decision only looks values up.
//!
//! A pair known in one direction only is taken to be symmetric (round-trip times are); a pair
//! known in neither direction gets the shortest path over the known pairs (Floyd–Warshall over a
//! petgraph graph). Measured values are kept even where a path would be shorter: a measurement
//! is what the operator observed, a path only an estimate.

use std::collections::{BTreeMap, HashMap};

use petgraph::algo::floyd_warshall::floyd_warshall_path;
use petgraph::graph::{DiGraph, NodeIndex};

/// Completion is cubic in the number of regions; beyond this many regions only measured pairs
/// (and their reverses) are known, kept as listed rather than as a dense `n × n` table (a region
/// ConfigMap of 1.5 MiB names some 150,000 regions). Real landscapes list a few hundred at most.
pub const MAX_COMPLETED_REGIONS: usize = 500;

/// How a latency was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatencyBasis {
    /// A region to itself, not listed: 0 ms.
    SameRegion,
    /// Listed for this direction.
    Measured,
    /// Listed for the opposite direction only.
    Reverse,
    /// Not listed: the shortest path over listed pairs.
    Path,
}

impl LatencyBasis {
    pub fn as_str(self) -> &'static str {
        match self {
            LatencyBasis::SameRegion => "same region",
            LatencyBasis::Measured => "measured",
            LatencyBasis::Reverse => "measured in reverse",
            LatencyBasis::Path => "derived by path",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Cell {
    ms: f64,
    basis: LatencyBasis,
}

fn cells_missing(cells: &Cells) -> bool {
    matches!(cells, Cells::Dense(c) if c.iter().any(Option::is_none))
}

/// A latency between two regions and how it was obtained.
#[derive(Clone, Debug, PartialEq)]
pub struct Latency<'a> {
    pub ms: f64,
    pub basis: LatencyBasis,
    /// For [`LatencyBasis::Path`]: the regions between the two ends, in order.
    pub via: Vec<&'a str>,
}

/// The cells of a table: dense `n × n` up to [`MAX_COMPLETED_REGIONS`] regions, else only the
/// measured pairs (a reverse or a region to itself is found on lookup), linear in the input.
#[derive(Clone, Debug, PartialEq)]
enum Cells {
    Dense(Vec<Option<Cell>>),
    Measured(HashMap<(u32, u32), Cell>),
}

impl Default for Cells {
    fn default() -> Self {
        Cells::Dense(Vec::new())
    }
}

impl Cells {
    fn get(&self, n: usize, i: usize, j: usize) -> Option<Cell> {
        match self {
            Cells::Dense(cells) => cells[i * n + j],
            Cells::Measured(pairs) => {
                let at = |a: usize, b: usize| pairs.get(&(a as u32, b as u32)).copied();
                at(i, j).or_else(|| {
                    if i == j {
                        Some(Cell {
                            ms: 0.0,
                            basis: LatencyBasis::SameRegion,
                        })
                    } else {
                        at(j, i).map(|c| Cell {
                            ms: c.ms,
                            basis: LatencyBasis::Reverse,
                        })
                    }
                })
            }
        }
    }
}

/// Every known and derived latency of one source: a dense `n × n` table when completed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatencyTable {
    regions: Vec<String>,
    index: HashMap<String, usize>,
    cells: Cells,
    /// `prev[i * n + j]`: the region before `j` on a shortest path from `i` (empty when no cell
    /// is derived).
    prev: Vec<u32>,
    completed: bool,
}

impl LatencyTable {
    /// Builds and completes the table. Values must be finite and non-negative (callers validate).
    pub fn new(known: &BTreeMap<String, BTreeMap<String, f64>>) -> LatencyTable {
        let mut names: Vec<&str> = known
            .iter()
            .flat_map(|(from, row)| {
                std::iter::once(from.as_str()).chain(row.keys().map(String::as_str))
            })
            .collect();
        names.sort_unstable();
        names.dedup();
        let n = names.len();
        let index: HashMap<String, usize> = names
            .iter()
            .enumerate()
            .map(|(i, r)| (r.to_string(), i))
            .collect();
        let at = &index;
        let measured = || {
            known.iter().flat_map(move |(from, row)| {
                let i = at[from.as_str()];
                row.iter().map(move |(to, ms)| {
                    let cell = Cell {
                        ms: *ms,
                        basis: LatencyBasis::Measured,
                    };
                    (i, at[to.as_str()], cell)
                })
            })
        };
        let regions = names.iter().map(|r| r.to_string()).collect();
        if n > MAX_COMPLETED_REGIONS {
            let pairs = measured()
                .map(|(i, j, c)| ((i as u32, j as u32), c))
                .collect();
            return LatencyTable {
                regions,
                index,
                cells: Cells::Measured(pairs),
                prev: Vec::new(),
                completed: false,
            };
        }
        let mut cells: Vec<Option<Cell>> = vec![None; n * n];
        for (i, j, cell) in measured() {
            cells[i * n + j] = Some(cell);
        }
        for i in 0..n {
            for j in 0..n {
                if cells[i * n + j].is_some() {
                    continue;
                }
                cells[i * n + j] = if i == j {
                    Some(Cell {
                        ms: 0.0,
                        basis: LatencyBasis::SameRegion,
                    })
                } else {
                    cells[j * n + i]
                        .filter(|c| c.basis == LatencyBasis::Measured)
                        .map(|c| Cell {
                            ms: c.ms,
                            basis: LatencyBasis::Reverse,
                        })
                };
            }
        }
        let mut table = LatencyTable {
            regions,
            index,
            cells: Cells::Dense(cells),
            prev: Vec::new(),
            completed: true,
        };
        if cells_missing(&table.cells) {
            table.complete();
        }
        table
    }

    fn complete(&mut self) {
        let n = self.regions.len();
        let Cells::Dense(cells) = &mut self.cells else {
            return;
        };
        let mut graph: DiGraph<(), f64> = DiGraph::with_capacity(n, n * n);
        let nodes: Vec<NodeIndex> = (0..n).map(|_| graph.add_node(())).collect();
        for i in 0..n {
            for j in 0..n {
                if i != j
                    && let Some(c) = cells[i * n + j]
                {
                    graph.add_edge(nodes[i], nodes[j], c.ms);
                }
            }
        }
        // Values are non-negative, so there is no negative cycle.
        let Ok((dist, prev)) = floyd_warshall_path(&graph, |e| *e.weight()) else {
            return;
        };
        // The shortest-path tree of every source, to name the regions on a derived path.
        self.prev = prev
            .iter()
            .flat_map(|row| row.iter().map(|p| p.map_or(u32::MAX, |p| p as u32)))
            .collect();
        for i in 0..n {
            for j in 0..n {
                if cells[i * n + j].is_none() {
                    let d = dist[&(nodes[i], nodes[j])];
                    if d < f64::MAX {
                        cells[i * n + j] = Some(Cell {
                            ms: d,
                            basis: LatencyBasis::Path,
                        });
                    }
                }
            }
        }
    }

    /// The regions the table knows, sorted.
    pub fn regions(&self) -> &[String] {
        &self.regions
    }

    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }

    /// `false` when the table has more than [`MAX_COMPLETED_REGIONS`] regions and missing pairs
    /// were left missing.
    pub fn is_completed(&self) -> bool {
        self.completed
    }

    /// The latencies from one region; `None` when the table does not know the region.
    pub fn row(&self, from: &str) -> Option<Row<'_>> {
        self.index.get(from).map(|&i| Row {
            table: self,
            from: i,
        })
    }
}

/// The latencies from one region, looked up in O(1) per destination.
#[derive(Clone, Copy)]
pub struct Row<'a> {
    table: &'a LatencyTable,
    from: usize,
}

impl<'a> Row<'a> {
    /// `Err(true)` when the destination is unknown to the table, `Err(false)` when it is known
    /// but unreachable over listed pairs.
    pub fn to(&self, region: &str) -> Result<Latency<'a>, bool> {
        let t = self.table;
        let n = t.regions.len();
        let j = *t.index.get(region).ok_or(true)?;
        let cell = t.cells.get(n, self.from, j).ok_or(false)?;
        let mut via = Vec::new();
        if cell.basis == LatencyBasis::Path {
            let mut k = t.prev[self.from * n + j] as usize;
            while k != self.from && k < n && via.len() < n {
                via.push(t.regions[k].as_str());
                k = t.prev[self.from * n + k] as usize;
            }
            via.reverse();
        }
        Ok(Latency {
            ms: cell.ms,
            basis: cell.basis,
            via,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(pairs: &[(&str, &str, f64)]) -> LatencyTable {
        let mut known: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
        for (a, b, ms) in pairs {
            known
                .entry(a.to_string())
                .or_default()
                .insert(b.to_string(), *ms);
        }
        LatencyTable::new(&known)
    }

    fn get(t: &LatencyTable, a: &str, b: &str) -> Result<(f64, LatencyBasis, Vec<String>), bool> {
        t.row(a)
            .ok_or(true)?
            .to(b)
            .map(|l| (l.ms, l.basis, l.via.iter().map(|s| s.to_string()).collect()))
    }

    #[test]
    fn measured_pairs_are_kept_even_when_a_path_is_shorter() {
        let t = table(&[("a", "b", 10.0), ("b", "c", 10.0), ("a", "c", 50.0)]);
        assert_eq!(
            get(&t, "a", "c"),
            Ok((50.0, LatencyBasis::Measured, vec![]))
        );
    }

    #[test]
    fn a_pair_listed_in_one_direction_is_symmetric() {
        let t = table(&[("a", "b", 10.0), ("b", "a", 12.0), ("a", "c", 30.0)]);
        assert_eq!(
            get(&t, "b", "a"),
            Ok((12.0, LatencyBasis::Measured, vec![]))
        );
        assert_eq!(get(&t, "c", "a"), Ok((30.0, LatencyBasis::Reverse, vec![])));
    }

    #[test]
    fn missing_pairs_take_the_shortest_path_and_name_the_regions_on_it() {
        // a-b 10, b-c 20, c-d 5 (one direction each): a->d = 35 via b, c.
        let t = table(&[
            ("a", "b", 10.0),
            ("b", "c", 20.0),
            ("c", "d", 5.0),
            ("a", "e", 100.0),
            ("e", "d", 100.0),
        ]);
        assert_eq!(
            get(&t, "a", "d"),
            Ok((
                35.0,
                LatencyBasis::Path,
                vec!["b".to_string(), "c".to_string()]
            ))
        );
        assert_eq!(
            get(&t, "d", "a"),
            Ok((
                35.0,
                LatencyBasis::Path,
                vec!["c".to_string(), "b".to_string()]
            ))
        );
    }

    #[test]
    fn asymmetric_paths_follow_the_direction_of_each_pair() {
        // a->b 10 and b->a 30 both measured; b->c 5 only. c->a goes c->b (reverse 5) then b->a 30.
        let t = table(&[("a", "b", 10.0), ("b", "a", 30.0), ("b", "c", 5.0)]);
        assert_eq!(
            get(&t, "a", "c"),
            Ok((15.0, LatencyBasis::Path, vec!["b".to_string()]))
        );
        assert_eq!(
            get(&t, "c", "a"),
            Ok((35.0, LatencyBasis::Path, vec!["b".to_string()]))
        );
    }

    #[test]
    fn a_table_of_more_regions_than_are_completed_keeps_the_listed_pairs_only() {
        // One row naming 150,000 regions, as a 1.5 MiB region ConfigMap can: a dense table
        // would take 150,000² cells.
        let mut known: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
        let row = known.entry("a".into()).or_default();
        for i in 0..150_000 {
            row.insert(format!("r{i}"), i as f64);
        }
        row.insert("a".into(), 2.0);
        known
            .entry("r7".into())
            .or_default()
            .insert("r8".into(), 3.0);
        let t = LatencyTable::new(&known);
        assert!(!t.is_completed());
        assert_eq!(t.regions().len(), 150_001);
        assert_eq!(
            get(&t, "a", "r9"),
            Ok((9.0, LatencyBasis::Measured, vec![]))
        );
        assert_eq!(get(&t, "r9", "a"), Ok((9.0, LatencyBasis::Reverse, vec![])));
        assert_eq!(get(&t, "a", "a"), Ok((2.0, LatencyBasis::Measured, vec![])));
        assert_eq!(
            get(&t, "r5", "r5"),
            Ok((0.0, LatencyBasis::SameRegion, vec![]))
        );
        assert_eq!(
            get(&t, "r8", "r7"),
            Ok((3.0, LatencyBasis::Reverse, vec![]))
        );
        assert_eq!(get(&t, "r5", "r6"), Err(false));
        assert_eq!(get(&t, "zz", "r6"), Err(true));
    }

    #[test]
    fn own_region_is_zero_unless_listed() {
        let t = table(&[("a", "b", 10.0), ("b", "b", 1.5)]);
        assert_eq!(
            get(&t, "a", "a"),
            Ok((0.0, LatencyBasis::SameRegion, vec![]))
        );
        assert_eq!(get(&t, "b", "b"), Ok((1.5, LatencyBasis::Measured, vec![])));
    }

    #[test]
    fn unknown_and_unreachable_regions_are_told_apart() {
        let t = table(&[("a", "b", 10.0), ("c", "d", 10.0)]);
        assert_eq!(get(&t, "a", "x"), Err(true), "x is not in the table");
        assert_eq!(get(&t, "x", "a"), Err(true), "no row for x");
        assert_eq!(get(&t, "a", "c"), Err(false), "two components");
    }

    #[test]
    fn an_empty_table_knows_nothing() {
        let t = table(&[]);
        assert!(t.is_empty());
        assert!(t.row("a").is_none());
    }
}
