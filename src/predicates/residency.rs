//! `Residency` (opt-in): a shoot whose region lies in a configured group of jurisdictions (e.g.
//! `eu`) is placed only on seeds whose region lies in that group too, unless the shoot or its
//! project carries `scheduling.gardener.cloud/residency: ignore`. Jurisdictions come from the
//! region catalogue and `schedulers.shoot.regions`.

use serde::Deserialize;

use crate::api::residency_opt_out;
use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::plugin::parse_args;
use crate::reason::{Reason, declared};
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Predicate, Prepared, Verdict, Why};

pub const NAME: &str = "Residency";

/// Arguments that make it keep some seeds of generated landscapes and reject others.
pub const EXAMPLE: &str = "{groups: [{name: eu}]}";

pub struct Residency {
    groups: Vec<Group>,
    /// Where the arguments are in the configuration, for [`Predicate::check_regions`].
    path: String,
}

#[derive(Clone, Debug, Default)]
struct Group {
    name: String,
    jurisdictions: Vec<String>,
    /// `jurisdictions` was left out and is `[name]`: problems are the name's.
    defaulted: bool,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GroupArg {
    name: String,
    /// Default: `[name]`.
    #[serde(default)]
    jurisdictions: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Args {
    groups: Option<Vec<GroupArg>>,
}

impl Group {
    /// The path of jurisdiction `j`: the group's name when the list was left out.
    fn path_of(&self, at: &str, j: usize) -> String {
        if self.defaulted {
            format!("{at}.name")
        } else {
            format!("{at}.jurisdictions[{j}]")
        }
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

pub(super) fn build(
    args: &serde_json::Value,
    path: &str,
) -> Result<Box<dyn Predicate>, Vec<FieldError>> {
    let a: Args = parse_args(args, path)?;
    let mut errors = Vec::new();
    let args = a.groups.unwrap_or_default();
    if args.is_empty() {
        errors.push(FieldError::new(
            format!("{path}.groups"),
            "must list at least one group, e.g. [{name: eu}]",
        ));
    }
    let mut groups = Vec::with_capacity(args.len());
    for (i, g) in args.into_iter().enumerate() {
        let at = format!("{path}.groups[{i}]");
        if g.name.is_empty() {
            errors.push(FieldError::new(format!("{at}.name"), "is required"));
        } else if let Some(first) = groups.iter().position(|q: &Group| q.name == g.name) {
            errors.push(FieldError::new(
                format!("{at}.name"),
                format!("duplicate group {:?} (also {path}.groups[{first}])", g.name),
            ));
        }
        let group = match g.jurisdictions {
            Some(list) => {
                if list.is_empty() {
                    errors.push(FieldError::new(
                        format!("{at}.jurisdictions"),
                        "must list at least one jurisdiction (leave it out to use the group's name)",
                    ));
                }
                Group {
                    name: g.name,
                    jurisdictions: list,
                    defaulted: false,
                }
            }
            None => Group {
                jurisdictions: vec![g.name.clone()]
                    .into_iter()
                    .filter(|n| !n.is_empty())
                    .collect(),
                name: g.name,
                defaulted: true,
            },
        };
        for (j, jur) in group.jurisdictions.iter().enumerate() {
            if !is_name(jur) {
                let what = if group.defaulted {
                    " (the group's jurisdiction when jurisdictions is left out)"
                } else {
                    ""
                };
                errors.push(FieldError::new(
                    group.path_of(&at, j),
                    format!("must be a lowercase name such as \"eu\" or \"ch\"{what}, got {jur:?}"),
                ));
            }
        }
        groups.push(group);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Box::new(Residency {
        groups,
        path: path.to_string(),
    }))
}

impl Predicate for Residency {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check_regions(&self, regions: &crate::regions::Regions) -> Vec<FieldError> {
        let known = regions.jurisdictions();
        let mut errors = Vec::new();
        for (i, g) in self.groups.iter().enumerate() {
            let at = format!("{}.groups[{i}]", self.path);
            for (j, jur) in g.jurisdictions.iter().enumerate() {
                if known.binary_search(jur).is_err() {
                    errors.push(FieldError::new(
                        g.path_of(&at, j),
                        format!(
                            "no region lies in jurisdiction {jur:?}: the group would never apply (known: {}; schedulers.shoot.regions can add regions)",
                            known.join(", ")
                        ),
                    ));
                }
            }
        }
        errors
    }

    fn check(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        seed: &SeedInfo,
        snap: &Snapshot,
        why: Why,
    ) -> Verdict {
        let regions = snap.regions();
        let Some(home) = regions.locate(&cx.provider, &cx.region) else {
            return Ok(());
        };
        let mut bound = self
            .groups
            .iter()
            .filter(|g| g.jurisdictions.contains(&home.jurisdiction))
            .peekable();
        if bound.peek().is_none()
            || residency_opt_out(&cx.shoot.metadata)
            || snap.project_opts_out_of_residency(&cx.project)
        {
            return Ok(());
        }
        let site = regions.locate(&seed.provider, &seed.region);
        for g in bound {
            if site
                .as_ref()
                .is_none_or(|s| !g.jurisdictions.contains(&s.jurisdiction))
            {
                return why.reject(|| {
                    Reason::new(Outside {
                        group: g.name.clone(),
                        shoot_region: cx.region.clone(),
                        seed_region: seed.region.clone(),
                        seed_site: site.as_ref().map(|s| {
                            format!("{}, {}, jurisdiction {}", s.city, s.country, s.jurisdiction)
                        }),
                    })
                });
            }
        }
        Ok(())
    }
}

/// The seed's region is outside a group the shoot's region is in.
#[derive(Debug)]
struct Outside {
    group: String,
    shoot_region: String,
    seed_region: String,
    /// `city, country, jurisdiction j`; `None` when the catalogue does not know the region.
    seed_site: Option<String>,
}

declared!(Outside {
    name: "residency",
    summary: "are outside the shoot's residency group",
    hint(self): Some(match &self.seed_site {
        None => format!(
            "add region {} with its country to schedulers.shoot.regions",
            self.seed_region
        ),
        Some(_) => format!(
            "add a seed in group {}, or annotate the shoot or its project with {}={}",
            self.group,
            crate::api::ANNOTATION_RESIDENCY,
            crate::api::RESIDENCY_IGNORE
        ),
    }),
    message(self, f): {
        let Outside {
            group,
            shoot_region,
            seed_region,
            seed_site,
        } = self;
        match seed_site {
            Some(site) => write!(
                f,
                "seed region {seed_region} ({site}) is outside group {group} of the shoot's region {shoot_region}"
            ),
            None => write!(
                f,
                "seed region {seed_region} is not in the region catalogue, so its jurisdiction is unknown (group {group} of the shoot's region {shoot_region})"
            ),
        }
    },
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ANNOTATION_RESIDENCY;
    use crate::fixtures::{SeedBuilder, ShootBuilder};
    use crate::predicates::testing::run;

    fn eu() -> Box<dyn Predicate> {
        build(&serde_json::json!({"groups": [{"name": "eu"}]}), "f.args").unwrap()
    }

    fn check(p: &dyn Predicate, shoot: ShootBuilder, seed_region: &str) -> Result<(), Reason> {
        run(
            p,
            &shoot.build(),
            &SeedBuilder::new("s1").region(seed_region).build(),
            &[],
            &[],
        )
    }

    fn shoot(region: &str) -> ShootBuilder {
        ShootBuilder::new("garden-p", "s").region(region)
    }

    #[test]
    fn an_eu_shoot_stays_on_eu_seeds() {
        let p = eu();
        assert_eq!(check(&*p, shoot("eu-central-1"), "eu-west-3"), Ok(()));
        assert_eq!(
            check(&*p, shoot("eu-central-1"), "eu-west-2")
                .unwrap_err()
                .to_string(),
            "seed region eu-west-2 (London, GB, jurisdiction gb) is outside group eu of the shoot's region eu-central-1"
        );
    }

    #[test]
    fn shoots_outside_every_group_or_in_unknown_regions_are_not_restricted() {
        let p = eu();
        assert_eq!(check(&*p, shoot("us-east-1"), "ap-south-1"), Ok(()));
        assert_eq!(check(&*p, shoot("lab-1"), "us-east-1"), Ok(()));
    }

    #[test]
    fn a_seed_of_unknown_jurisdiction_is_rejected_for_a_bound_shoot() {
        let err = check(&*eu(), shoot("eu-central-1"), "lab-1").unwrap_err();
        assert_eq!(
            err.to_string(),
            "seed region lab-1 is not in the region catalogue, so its jurisdiction is unknown (group eu of the shoot's region eu-central-1)"
        );
    }

    #[test]
    fn the_shoot_annotation_opts_out_only_with_value_ignore() {
        let p = eu();
        let annotated = |v| shoot("eu-central-1").annotation(ANNOTATION_RESIDENCY, v);
        assert_eq!(check(&*p, annotated("ignore"), "us-east-1"), Ok(()));
        assert!(check(&*p, annotated("yes"), "us-east-1").is_err());
    }
}
