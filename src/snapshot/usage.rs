//! Seed usage, updated per shoot change so that no decision scans the shoot list.

use std::collections::HashMap;

use crate::api::{Shoot, object_key};

/// What a shoot's control plane demands is decided by its purpose and failure tolerance; usage is
/// counted per class so demand can be priced by configuration without revisiting shoots.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DemandClass {
    pub purpose: Option<Box<str>>,
    pub failure_tolerance: Option<Box<str>>,
}

impl DemandClass {
    pub fn of(shoot: &Shoot) -> DemandClass {
        DemandClass {
            purpose: shoot.spec.purpose.as_deref().map(Into::into),
            failure_tolerance: shoot.failure_tolerance_type().map(Into::into),
        }
    }
}

/// The usage of one seed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SeedUsage {
    pub shoots: u64,
    /// Shoots per demand class, indexed by the class's id in [`Usage::classes`].
    by_class: Vec<u32>,
}

impl SeedUsage {
    /// `(class id, shoots)` of every demand class with shoots on this seed.
    pub fn by_class(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.by_class
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(id, n)| (id, *n))
    }
}

#[derive(Clone, Debug)]
struct Entry {
    seeds: Box<[Box<str>]>,
    namespace: Box<str>,
    class: u32,
    /// `spec.region` of the shoot: where its demand comes from, whatever seed serves it
    region: Box<str>,
}

#[derive(Clone, Debug, Default)]
pub struct Usage {
    shoots: HashMap<Box<str>, Entry>,
    /// Every demand class seen, by id: a handful (purposes × failure tolerances), so usage is
    /// priced per class without revisiting shoots, and a shoot's entry holds only the id.
    classes: Vec<DemandClass>,
    class_ids: HashMap<DemandClass, u32>,
    seeds: HashMap<Box<str>, SeedUsage>,
    /// namespace -> seed -> shoots: a project's spread is read from its own (small) map, so
    /// the cost does not grow with the number of other projects' shoots on a seed
    namespaces: HashMap<Box<str>, HashMap<Box<str>, u32>>,
    /// shoot region -> placed shoots from it, counted once per shoot: the demand estimate of
    /// `CapacityPressure`, read without visiting shoots
    regions: HashMap<Box<str>, u64>,
}

impl Usage {
    pub fn upsert(&mut self, shoot: &Shoot) {
        let key = object_key(&shoot.metadata);
        self.remove(&key);
        let seeds: Box<[Box<str>]> = shoot.occupied_seeds().map(Into::into).collect();
        if seeds.is_empty() {
            return;
        }
        let class = DemandClass::of(shoot);
        let class = match self.class_ids.get(&class) {
            Some(id) => *id,
            None => {
                let id = u32::try_from(self.classes.len()).expect("fewer than 2^32 demand classes");
                self.classes.push(class.clone());
                self.class_ids.insert(class, id);
                id
            }
        };
        let entry = Entry {
            seeds,
            namespace: shoot
                .metadata
                .namespace
                .as_deref()
                .unwrap_or_default()
                .into(),
            class,
            region: shoot.spec.region.as_deref().unwrap_or_default().into(),
        };
        *self.regions.entry(entry.region.clone()).or_default() += 1;
        for seed in entry.seeds.iter() {
            let u = self.seeds.entry(seed.clone()).or_default();
            u.shoots += 1;
            let i = class as usize;
            if u.by_class.len() <= i {
                u.by_class.resize(i + 1, 0);
            }
            u.by_class[i] += 1;
            *self
                .namespaces
                .entry(entry.namespace.clone())
                .or_default()
                .entry(seed.clone())
                .or_default() += 1;
        }
        self.shoots.insert(key.into(), entry);
    }

    pub fn remove(&mut self, key: &str) {
        let Some(entry) = self.shoots.remove(key) else {
            return;
        };
        if let Some(n) = self.regions.get_mut(&entry.region) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.regions.remove(&entry.region);
            }
        }
        for seed in entry.seeds.iter() {
            let Some(u) = self.seeds.get_mut(seed) else {
                continue;
            };
            u.shoots = u.shoots.saturating_sub(1);
            if let Some(n) = u.by_class.get_mut(entry.class as usize) {
                *n = n.saturating_sub(1);
            }
            if u.shoots == 0 {
                self.seeds.remove(seed);
            }
            if let Some(per_seed) = self.namespaces.get_mut(&entry.namespace) {
                if let Some(n) = per_seed.get_mut(seed) {
                    *n -= 1;
                    if *n == 0 {
                        per_seed.remove(seed);
                    }
                }
                if per_seed.is_empty() {
                    self.namespaces.remove(&entry.namespace);
                }
            }
        }
    }

    /// Every demand class seen so far; [`SeedUsage::by_class`] refers to them by index.
    pub fn classes(&self) -> &[DemandClass] {
        &self.classes
    }

    /// Usage of a seed (empty when nothing runs there).
    pub fn seed(&self, name: &str) -> Option<&SeedUsage> {
        self.seeds.get(name)
    }

    pub fn shoots_on(&self, seed: &str) -> u64 {
        self.seeds.get(seed).map_or(0, |u| u.shoots)
    }

    /// Shoots of a namespace per seed (empty when it has none placed).
    pub fn namespace_seeds(&self, namespace: &str) -> Option<&HashMap<Box<str>, u32>> {
        self.namespaces.get(namespace)
    }

    /// Number of shoots with at least one seed.
    pub fn placed_shoots(&self) -> usize {
        self.shoots.len()
    }

    /// Placed shoots per shoot region (`spec.region`), each shoot counted once.
    pub fn shoots_by_region(&self) -> &HashMap<Box<str>, u64> {
        &self.regions
    }

    /// The seeds a shoot currently occupies in the index (by `namespace/name`).
    pub fn seeds_of(&self, key: &str) -> Vec<&str> {
        self.shoots
            .get(key)
            .map(|e| e.seeds.iter().map(|s| &**s).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ShootBuilder;

    #[test]
    fn a_migrating_shoot_counts_on_both_seeds_and_updates_replace_old_usage() {
        let mut u = Usage::default();
        let s = ShootBuilder::new("garden-a", "s1")
            .seed("s-1")
            .status_seed("s-2")
            .build();
        u.upsert(&s);
        assert_eq!((u.shoots_on("s-1"), u.shoots_on("s-2")), (1, 1));
        let moved = ShootBuilder::new("garden-a", "s1")
            .seed("s-2")
            .status_seed("s-2")
            .build();
        u.upsert(&moved);
        assert_eq!((u.shoots_on("s-1"), u.shoots_on("s-2")), (0, 1));
        assert_eq!(u.namespace_seeds("garden-a").unwrap()["s-2"], 1);
        assert!(!u.namespace_seeds("garden-a").unwrap().contains_key("s-1"));
        u.remove("garden-a/s1");
        assert_eq!(u.shoots_on("s-2"), 0);
        assert!(u.seed("s-2").is_none());
        assert!(u.namespace_seeds("garden-a").is_none());
    }

    #[test]
    fn shoots_are_counted_per_demand_class() {
        let mut u = Usage::default();
        let shoot = |name: &str, purpose: &str| {
            ShootBuilder::new("garden-a", name)
                .purpose(purpose)
                .seed("s-1")
                .build()
        };
        u.upsert(&shoot("a", "production"));
        u.upsert(&shoot("b", "evaluation"));
        u.upsert(&shoot("c", "production"));
        let counts = |u: &Usage| -> Vec<(Option<String>, u32)> {
            u.seed("s-1")
                .map(|s| {
                    s.by_class()
                        .map(|(id, n)| (u.classes()[id].purpose.as_deref().map(Into::into), n))
                        .collect()
                })
                .unwrap_or_default()
        };
        assert_eq!(
            counts(&u),
            [
                (Some("production".into()), 2),
                (Some("evaluation".into()), 1)
            ]
        );
        u.upsert(&shoot("a", "evaluation"));
        assert_eq!(
            counts(&u),
            [
                (Some("production".into()), 1),
                (Some("evaluation".into()), 2)
            ]
        );
        u.remove("garden-a/a");
        u.remove("garden-a/b");
        assert_eq!(counts(&u), [(Some("production".into()), 1)]);
        assert_eq!(u.classes().len(), 2, "classes are interned once");
    }

    #[test]
    fn placed_shoots_are_counted_once_per_shoot_region_and_leave_when_removed() {
        let mut u = Usage::default();
        let shoot = |name: &str, region: &str| {
            ShootBuilder::new("garden-a", name)
                .region(region)
                .seed("s-1")
                .status_seed("s-2")
                .build()
        };
        u.upsert(&shoot("a", "eu-west-1"));
        u.upsert(&shoot("b", "eu-west-1"));
        u.upsert(&shoot("c", "us-east-1"));
        u.upsert(
            &ShootBuilder::new("garden-a", "pending")
                .region("us-east-1")
                .build(),
        );
        let by_region = |u: &Usage| {
            let mut v: Vec<(String, u64)> = u
                .shoots_by_region()
                .iter()
                .map(|(r, n)| (r.to_string(), *n))
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            by_region(&u),
            [("eu-west-1".into(), 2), ("us-east-1".into(), 1)],
            "a migrating shoot is one unit of demand; a pending one none"
        );
        u.upsert(&shoot("b", "us-east-1"));
        u.remove("garden-a/a");
        assert_eq!(by_region(&u), [("us-east-1".into(), 2)]);
    }

    #[test]
    fn pending_shoots_count_nowhere() {
        let mut u = Usage::default();
        u.upsert(&ShootBuilder::new("garden-a", "p").build());
        assert_eq!(u.placed_shoots(), 0);
    }
}
