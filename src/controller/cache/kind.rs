//! The kinds of object the controller watches.

/// The watched kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WatchedKind {
    Shoot,
    Seed,
    CloudProfile,
    NamespacedCloudProfile,
    Project,
    ConfigMap,
    /// Carbon-intensity ConfigMaps in every namespace (a watch of its own, started only when a
    /// profile uses `CarbonIntensity`).
    CarbonConfigMap,
}

impl WatchedKind {
    pub const ALL: [WatchedKind; 7] = [
        WatchedKind::Shoot,
        WatchedKind::Seed,
        WatchedKind::CloudProfile,
        WatchedKind::NamespacedCloudProfile,
        WatchedKind::Project,
        WatchedKind::ConfigMap,
        WatchedKind::CarbonConfigMap,
    ];

    /// Kinds a decision can do without: projects (the namespace `garden-<project>` names the
    /// project), namespaced cloud profiles, region ConfigMaps and carbon-intensity ConfigMaps
    /// (seeds then score neutral). Upstream's RBAC for the scheduler grants no access to
    /// projects.
    pub fn optional(&self) -> bool {
        matches!(
            self,
            WatchedKind::Project
                | WatchedKind::NamespacedCloudProfile
                | WatchedKind::ConfigMap
                | WatchedKind::CarbonConfigMap
        )
    }

    /// The kind's position in [`WatchedKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            WatchedKind::Shoot => "Shoot",
            WatchedKind::Seed => "Seed",
            WatchedKind::CloudProfile => "CloudProfile",
            WatchedKind::NamespacedCloudProfile => "NamespacedCloudProfile",
            WatchedKind::Project => "Project",
            WatchedKind::ConfigMap => "ConfigMap",
            WatchedKind::CarbonConfigMap => "CarbonIntensityConfigMap",
        }
    }
}

/// Which list of its kind last brought an object. Wrapping is harmless: only equality with the
/// running list's number counts.
pub(super) type Mark = u32;

/// Per watched kind: the number of its current (or last) list, and whether that list is running.
#[derive(Default)]
pub(super) struct Lists([(Mark, bool); WatchedKind::ALL.len()]);

impl Lists {
    /// The mark objects of `kind` get when they are applied now.
    pub(super) fn mark(&self, kind: WatchedKind) -> Mark {
        self.0[kind.index()].0
    }

    pub(super) fn begin(&mut self, kind: WatchedKind) {
        let (mark, running) = &mut self.0[kind.index()];
        *mark = mark.wrapping_add(1);
        *running = true;
    }

    /// The mark of the list that ends, if one was running.
    pub(super) fn end(&mut self, kind: WatchedKind) -> Option<Mark> {
        let (mark, running) = &mut self.0[kind.index()];
        std::mem::take(running).then_some(*mark)
    }
}
