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
/// (and their reverses) are known. Real landscapes list a few hundred regions at most.
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

/// A latency between two regions and how it was obtained.
#[derive(Clone, Debug, PartialEq)]
pub struct Latency<'a> {
    pub ms: f64,
    pub basis: LatencyBasis,
    /// For [`LatencyBasis::Path`]: the regions between the two ends, in order.
    pub via: Vec<&'a str>,
}

/// Every known and derived latency of one source, as a dense `n × n` table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatencyTable {
    regions: Vec<String>,
    index: HashMap<String, usize>,
    cells: Vec<Option<Cell>>,
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
        let mut cells: Vec<Option<Cell>> = vec![None; n * n];
        for (from, row) in known {
            let i = index[from.as_str()];
            for (to, ms) in row {
                let j = index[to.as_str()];
                cells[i * n + j] = Some(Cell {
                    ms: *ms,
                    basis: LatencyBasis::Measured,
                });
            }
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
            regions: names.iter().map(|r| r.to_string()).collect(),
            index,
            cells,
            prev: Vec::new(),
            completed: n <= MAX_COMPLETED_REGIONS,
        };
        if table.completed && table.cells.iter().any(Option::is_none) {
            table.complete();
        }
        table
    }

    fn complete(&mut self) {
        let n = self.regions.len();
        let mut graph: DiGraph<(), f64> = DiGraph::with_capacity(n, n * n);
        let nodes: Vec<NodeIndex> = (0..n).map(|_| graph.add_node(())).collect();
        for i in 0..n {
            for j in 0..n {
                if i != j
                    && let Some(c) = self.cells[i * n + j]
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
                if self.cells[i * n + j].is_none() {
                    let d = dist[&(nodes[i], nodes[j])];
                    if d < f64::MAX {
                        self.cells[i * n + j] = Some(Cell {
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
        let cell = t.cells[self.from * n + j].ok_or(false)?;
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
