//! The API client of the offline commands (`simulate --live`, `plan --kubeconfig`): the
//! kubeconfig read like every other input file, and building the client (which runs an exec
//! credential plugin, when the kubeconfig names one) bounded in time.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::Client;

use crate::controller::{self, RestClientMetrics};
use crate::input;

use super::live::seconds;

/// The most bytes a kubeconfig file may hold.
pub const MAX_KUBECONFIG_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("kubeconfig {path}: {source}")]
    ReadKubeconfig {
        path: String,
        source: input::ReadError,
    },
    #[error(
        "the exec credential plugin {command:?} (user {user:?} of kubeconfig {path}) did not \
         answer within {} (--request-timeout)", seconds(*.timeout)
    )]
    PluginTimeout {
        command: String,
        user: String,
        path: String,
        timeout: Duration,
    },
    #[error("building the API client did not finish within {} (--request-timeout)", seconds(*.timeout))]
    Timeout { timeout: Duration },
    #[error("{0}")]
    Client(#[from] controller::ControllerError),
}

/// The kubeconfig files `kubeconfig` stands for: its `:`-separated paths, or, when empty, those
/// kube's inference reads (`$KUBECONFIG`, else `~/.kube/config` when it exists).
fn paths(kubeconfig: &str) -> Vec<PathBuf> {
    let list = if kubeconfig.is_empty() {
        match std::env::var_os("KUBECONFIG") {
            Some(v) if !v.is_empty() => v,
            _ => {
                return std::env::var_os("HOME")
                    .map(|h| Path::new(&h).join(".kube/config"))
                    .filter(|p| p.exists())
                    .into_iter()
                    .collect();
            }
        }
    } else {
        kubeconfig.into()
    };
    std::env::split_paths(&list)
        .filter(|p| !p.as_os_str().is_empty())
        .collect()
}

/// The exec plugin the current context's user runs, if any: (command, user, file).
fn exec_plugin(files: &[(PathBuf, String)]) -> Option<(String, String, String)> {
    let configs: Vec<(&PathBuf, kube::config::Kubeconfig)> = files
        .iter()
        .filter_map(|(p, text)| {
            let text = crate::bom::strip_bom(text);
            Some((p, kube::config::Kubeconfig::from_yaml(text).ok()?))
        })
        .collect();
    let current = configs
        .iter()
        .find_map(|(_, k)| k.current_context.clone())?;
    let user = configs.iter().find_map(|(_, k)| {
        k.contexts
            .iter()
            .find(|c| c.name == current)
            .and_then(|c| c.context.as_ref())
            .and_then(|c| c.user.clone())
    })?;
    configs.iter().find_map(|(p, k)| {
        let info = k.auth_infos.iter().find(|a| a.name == user)?;
        let exec = info.auth_info.as_ref()?.exec.as_ref()?;
        Some((
            exec.command.clone().unwrap_or_default(),
            user.clone(),
            p.display().to_string(),
        ))
    })
}

/// The client of an offline command, and the address of the API server it sends to.
pub struct Connected {
    pub client: Client,
    /// `https://api.example.com:443`, for messages
    pub server: String,
}

/// Builds the client for an offline command: every kubeconfig file checked first (regular
/// files only, at most [`MAX_KUBECONFIG_BYTES`]), then the client built on a blocking thread —
/// an exec credential plugin runs there, and one that never returns fails the command after
/// `timeout` naming it. The runtime must be shut down with `shutdown_background` afterwards:
/// a plugin that did not answer still holds that thread.
pub async fn connect(
    kubeconfig: &str,
    qps: f32,
    burst: i32,
    timeout: Duration,
) -> Result<Connected, ConnectError> {
    let mut files = Vec::new();
    for path in paths(kubeconfig) {
        let text = input::read_text(&path, MAX_KUBECONFIG_BYTES).map_err(|source| {
            ConnectError::ReadKubeconfig {
                path: path.display().to_string(),
                source,
            }
        })?;
        files.push((path, text));
    }
    let plugin = exec_plugin(&files);
    let runtime = tokio::runtime::Handle::current();
    let owned = kubeconfig.to_string();
    let build = tokio::task::spawn_blocking(move || {
        runtime.block_on(async {
            let mut config = controller::load_config(&owned).await?;
            if let Some(exec) = config.auth_info.exec.as_mut() {
                // A second more than ours: this command's own timeout, naming the plugin, fires
                // first; the guard then sees it gone and kills the plugin's process group.
                super::exec_guard::wrap(exec, timeout + Duration::from_secs(1));
            }
            let server = config.cluster_url.to_string();
            // Each request is bounded by --request-timeout, not the scheduler's own limit: a
            // second more, so that the caller's timeout, naming the flag, is the one that fires.
            let client = controller::client_from_config(
                &config,
                qps,
                burst,
                &RestClientMetrics::default(),
                timeout + Duration::from_secs(1),
            )?;
            Ok::<_, controller::ControllerError>(Connected { client, server })
        })
    });
    match tokio::time::timeout(timeout, build).await {
        Ok(Ok(client)) => Ok(client?),
        Ok(Err(join)) => Err(ConnectError::Client(
            controller::ControllerError::BuildClient(join.to_string()),
        )),
        Err(_) => Err(match plugin {
            Some((command, user, path)) => ConnectError::PluginTimeout {
                command,
                user,
                path,
                timeout,
            },
            None => ConnectError::Timeout { timeout },
        }),
    }
}
