//! Carbon-aware placement: what a seed's forecast means for a shoot (the assessment behind the
//! `CarbonIntensity` priority) and the report the metrics and `simulate` show.
//!
//! The forecasts themselves (parsing, validation, staleness) are [`crate::forecast`]'s, below the
//! snapshot; they are re-exported here so that everything carbon is found under one name.
//! Everything here is pure: `now` is always passed in.

mod assess;
mod report;
mod settings;

pub use crate::forecast::*;
pub use assess::{Assessment, Basis, Neutral, Origin};
pub use report::{
    CarbonReport, DataStatus, LocationReport, SeedReport, SourceProblem, StatusChange,
    StatusChanges,
};
pub use settings::{CarbonSettings, Scale};
