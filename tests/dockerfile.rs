//! The Dockerfile's structure, against the files it must agree with: the stages, the base images
//! (build arguments whose defaults are the public ones), the pinned toolchain, the locked release
//! build, the non-root distroless runtime and the entrypoint. `make image` builds the file and
//! `make image-check` (tests/image.rs) runs the image as the chart's Deployment says.

use std::path::Path;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("reading {}: {e}", full.display()))
}

#[derive(Debug)]
struct Instruction {
    keyword: String,
    args: String,
}

#[derive(Debug)]
struct Stage {
    image: String,
    name: Option<String>,
    body: Vec<Instruction>,
}

impl Stage {
    fn all(&self, keyword: &str) -> Vec<&str> {
        self.body
            .iter()
            .filter(|i| i.keyword == keyword)
            .map(|i| i.args.as_str())
            .collect()
    }
}

/// Instructions with line continuations joined and comments dropped, grouped into stages.
fn stages() -> Vec<Stage> {
    let text = read("Dockerfile");
    let mut logical = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_empty()) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head.trim_end());
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                logical.push(std::mem::take(&mut current));
            }
        }
    }
    assert!(
        current.is_empty(),
        "the Dockerfile ends inside a continued line"
    );

    let mut stages: Vec<Stage> = Vec::new();
    // ARGs before the first FROM: the only ones a FROM line may use; their defaults.
    let mut global_args: Vec<(String, String)> = Vec::new();
    for line in logical.iter().filter(|l| !l.is_empty()) {
        let (keyword, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let keyword = keyword.to_ascii_uppercase();
        let args = args.trim().to_string();
        if keyword == "ARG" && stages.is_empty() {
            let (name, default) = args
                .split_once('=')
                .unwrap_or_else(|| panic!("global ARG {args} has no default"));
            global_args.push((name.to_string(), default.trim_matches('"').to_string()));
        } else if keyword == "FROM" {
            let mut args = args.clone();
            for (name, default) in &global_args {
                args = args.replace(&format!("${{{name}}}"), default);
            }
            assert!(!args.contains('$'), "FROM {args} uses an unknown ARG");
            let words: Vec<&str> = args.split_whitespace().collect();
            let name = match words.as_slice() {
                [_] => None,
                [_, as_, name] if as_.eq_ignore_ascii_case("AS") => Some(name.to_string()),
                _ => panic!("unexpected FROM {args}"),
            };
            stages.push(Stage {
                image: words[0].to_string(),
                name,
                body: Vec::new(),
            });
        } else {
            stages
                .last_mut()
                .unwrap_or_else(|| panic!("{keyword} before the first FROM"))
                .body
                .push(Instruction { keyword, args });
        }
    }
    stages
}

/// `key = "value"` from a TOML file (flat lookup, enough for the keys used here).
fn toml_string(text: &str, key: &str) -> String {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().trim_matches('"').to_string())
        .unwrap_or_else(|| panic!("no {key} = \"...\""))
}

fn binary_name() -> String {
    let cargo = read("Cargo.toml");
    let bin = cargo
        .split("[[bin]]")
        .nth(1)
        .expect("Cargo.toml declares the binary");
    toml_string(bin, "name")
}

#[test]
fn there_is_one_builder_stage_and_one_runtime_stage() {
    let stages = stages();
    assert_eq!(stages.len(), 2, "{stages:#?}");
    assert_eq!(stages[0].name.as_deref(), Some("builder"));
    assert_eq!(stages[1].name, None, "the last stage is the image");
}

#[test]
fn builder_uses_the_pinned_toolchain_and_builds_the_locked_release() {
    let stages = stages();
    let builder = &stages[0];
    let channel = toml_string(&read("rust-toolchain.toml"), "channel");
    assert_eq!(
        builder.image,
        format!("rust:{channel}-bookworm"),
        "builder image follows rust-toolchain.toml"
    );
    let rust_version = toml_string(&read("Cargo.toml"), "rust-version");
    assert!(
        channel.starts_with(&rust_version),
        "toolchain {channel} is not Cargo.toml's rust-version {rust_version}"
    );

    let runs = builder.all("RUN").join(" && ");
    assert!(
        runs.contains("cargo build --release --locked"),
        "builder does not run a locked release build: {runs}"
    );
    assert!(
        builder.all("COPY").contains(&". ."),
        "builder copies the sources"
    );

    // The build context keeps what the build needs and drops build output and history.
    let ignore = read(".dockerignore");
    let ignored: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    for needed in [
        "Cargo.toml",
        "Cargo.lock",
        "rust-toolchain.toml",
        "src",
        "config",
        "*",
        "**",
    ] {
        assert!(!ignored.contains(&needed), ".dockerignore drops {needed}");
    }
    for dropped in ["target", ".git"] {
        assert!(ignored.contains(&dropped), ".dockerignore keeps {dropped}");
    }
}

#[test]
fn runtime_is_distroless_non_root_with_the_builders_libc() {
    let stages = stages();
    let runtime = &stages[1];
    assert_eq!(runtime.image, "gcr.io/distroless/cc-debian12:nonroot");
    assert!(
        stages[0].image.ends_with("-bookworm"),
        "glibc of Debian 12 in both stages"
    );
    assert!(
        runtime.all("RUN").is_empty(),
        "distroless has no shell to RUN in"
    );
    let users = runtime.all("USER");
    assert_eq!(
        users,
        vec!["65532:65532"],
        "the runtime stage runs as the nonroot user"
    );
}

#[test]
fn runtime_keeps_one_malloc_arena() {
    let stages = stages();
    let runtime = stages.last().unwrap();
    assert!(
        runtime.all("ENV").contains(&"MALLOC_ARENA_MAX=1"),
        "the runtime stage sets MALLOC_ARENA_MAX=1: {:?}",
        runtime.all("ENV")
    );
}

#[test]
fn entrypoint_is_the_release_binary_copied_from_the_builder() {
    let stages = stages();
    let bin = binary_name();
    let built = format!("target/release/{bin}");
    let runs = stages[0].all("RUN").join(" ");
    // hack/image-binary.sh BINARY OUT writes OUT/<bin> without line tables (and `make image`
    // feeds the same OUT layout in place of this stage).
    let out_dir = runs
        .split("&&")
        .map(str::trim)
        .find_map(|cmd| cmd.strip_prefix(&format!("hack/image-binary.sh {built} ")))
        .unwrap_or_else(|| {
            panic!("builder does not put {built} out of the target cache with hack/image-binary.sh: {runs}")
        })
        .trim()
        .to_string();
    let copied_out = format!("{out_dir}/{bin}");

    let runtime = &stages[1];
    let copies = runtime.all("COPY");
    assert_eq!(
        copies.len(),
        1,
        "the image holds the binary only: {copies:?}"
    );
    let words: Vec<&str> = copies[0].split_whitespace().collect();
    assert_eq!(
        words,
        vec!["--from=builder", copied_out.as_str(), &format!("/{bin}")]
    );

    let entrypoints = runtime.all("ENTRYPOINT");
    assert_eq!(entrypoints.len(), 1);
    let exec: Vec<String> =
        serde_json::from_str(entrypoints[0]).expect("ENTRYPOINT is in exec (JSON) form");
    assert_eq!(exec, vec![format!("/{bin}")]);
    assert!(
        runtime.all("CMD").is_empty(),
        "arguments come from the chart, not the image"
    );
}

#[test]
fn chart_runs_pods_as_the_images_user() {
    let values: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&read("charts/gardener-scheduler/values.yaml")).unwrap();
    let stages = stages();
    let user = stages[1].all("USER")[0].to_string();
    let (uid, gid) = user.split_once(':').unwrap();
    let psc = &values["podSecurityContext"];
    assert_eq!(
        psc["runAsUser"].as_i64().map(|u| u.to_string()).as_deref(),
        Some(uid)
    );
    assert_eq!(
        psc["runAsGroup"].as_i64().map(|g| g.to_string()).as_deref(),
        Some(gid)
    );
}
