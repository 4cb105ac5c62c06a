//! `hack/ensure-package.sh`, which `make test` runs before anything slow: nothing to do when the
//! commands are there, and when packages are missing and may not be installed, an immediate
//! failure naming the one command that installs all of them.

use std::process::Command;

fn script() -> Command {
    Command::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/hack/ensure-package.sh"
    ))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

#[test]
fn commands_that_are_there_need_nothing() {
    let out = script()
        .args(["bash", "bash", "coreutils", "ls"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_odd_number_of_arguments_is_a_usage_error() {
    let out = script().args(["chromium"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: hack/ensure-package.sh"));
}

/// Run as a user who may not install packages (`nobody`, from root): one line, one command.
#[test]
fn missing_packages_a_user_may_not_install_are_named_in_one_command() {
    let args = "no-such-package-a no-such-command-a bash bash no-such-package-b no-such-command-b";
    let out = if is_root() {
        // a copy nobody can read wherever the clone lives
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("ensure-package-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let copy = dir.join("ensure-package.sh");
        std::fs::copy(
            concat!(env!("CARGO_MANIFEST_DIR"), "/hack/ensure-package.sh"),
            &copy,
        )
        .unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = Command::new("su")
            .args(["nobody", "-s", "/bin/bash", "-c"])
            .arg(format!("cd / && {} {args}", copy.display()))
            .output()
            .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        out
    } else if Command::new("sudo")
        .args(["-n", "true"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("skipped: this user may install packages with sudo");
        return;
    } else {
        script().args(args.split(' ')).output().unwrap()
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "missing no-such-command-a no-such-command-b and this user cannot install packages; \
             run: sudo apt-get install -y no-such-package-a no-such-package-b"
        ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
