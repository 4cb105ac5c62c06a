//! The errors that stop the process from starting: its configuration, its kubeconfig, its
//! clients, its listeners.

use crate::config::ConfigError;

#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error("loading kubeconfig {path}: {message}")]
    LoadKubeconfig { path: String, message: String },
    #[error("building the API client: {0}")]
    BuildClient(String),
    #[error("listening on {address} ({what}): {source}")]
    Listen {
        what: &'static str,
        address: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    LoadConfig(#[from] ConfigError),
}
