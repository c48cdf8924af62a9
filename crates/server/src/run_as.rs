//! `AZTABLE_RUN_AS=UID[:GID]`: a server started as root reads what only root may read
//! (a TLS key handed over as a root-owned file of mode 0600, as Testcontainers for
//! Java's `withSsl` copies it), then gives up root for good before it opens the data
//! directory, binds its ports or serves a request.
//!
//! The container image starts as root with `AZTABLE_RUN_AS=10001:10001` (the owner of
//! `/data`). Started as any other user (`docker run --user 10001`, runAsNonRoot), the
//! variable changes nothing: there is nothing to give up. Unset or empty, a root process
//! stays root.
//!
//! The drop is `setgroups([gid])`, `setgid(gid)`, `setuid(uid)`, in that order (the
//! group calls need root), through glibc, which applies each call to every thread of
//! the process; it runs before the runtime starts its threads all the same. Afterwards
//! the real, effective and saved ids are checked, and so is that `setuid(0)` fails: a
//! process that could become root again is refused rather than served.

use nix::unistd::{getegid, geteuid, getgid, getuid, setgid, setgroups, setuid, Gid, Uid};

/// The environment variable naming the user (and group) to run as.
pub const RUN_AS_VAR: &str = "AZTABLE_RUN_AS";

/// A numeric user and group to run as: names are not resolved (the image has no
/// `/etc/passwd` to resolve them with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunAs {
    /// User id.
    pub uid: u32,
    /// Group id (the user id when not given).
    pub gid: u32,
}

impl RunAs {
    /// Parses `UID` or `UID:GID`; `None` for an unset or empty value (stay as started).
    pub fn parse(value: Option<&str>) -> Result<Option<RunAs>, String> {
        let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else { return Ok(None) };
        let id = |part: &str, what: &str| {
            part.parse::<u32>().map_err(|_| {
                format!(
                    "{RUN_AS_VAR}={value}: the {what} must be a number (UID or UID:GID, e.g. 10001:10001)"
                )
            })
        };
        let (uid, gid) = match value.split_once(':') {
            Some((u, g)) => (id(u, "user id")?, id(g, "group id")?),
            None => {
                let uid = id(value, "user id")?;
                (uid, uid)
            }
        };
        if uid == 0 {
            return Err(format!("{RUN_AS_VAR}={value}: names root; leave it empty to stay root"));
        }
        Ok(Some(RunAs { uid, gid }))
    }
}

/// What [`drop_root`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    /// Nothing asked for.
    NotAsked,
    /// Not started as root (e.g. `--user 10001`): running as this user id already.
    NotRoot(u32),
    /// Root given up: now running as this user and group.
    To(RunAs),
}

/// Gives up root for `run_as` when the process runs as root; otherwise does nothing.
/// Call it after reading the files only root may read and before opening anything the
/// server writes.
pub fn drop_root(run_as: Option<RunAs>) -> Result<Dropped, String> {
    let Some(run_as) = run_as else { return Ok(Dropped::NotAsked) };
    if !geteuid().is_root() {
        return Ok(Dropped::NotRoot(geteuid().as_raw()));
    }
    let (uid, gid) = (Uid::from_raw(run_as.uid), Gid::from_raw(run_as.gid));
    let fail = |what: &str, e: nix::Error| format!("{RUN_AS_VAR}: cannot {what}: {e}");
    setgroups(&[gid]).map_err(|e| fail(&format!("set the supplementary groups to [{gid}]"), e))?;
    setgid(gid).map_err(|e| fail(&format!("set the group id {gid}"), e))?;
    setuid(uid).map_err(|e| fail(&format!("set the user id {uid}"), e))?;
    if getuid() != uid || geteuid() != uid || getgid() != gid || getegid() != gid {
        return Err(format!(
            "{RUN_AS_VAR}: after the drop the ids are uid {}/{} gid {}/{}, not {uid}:{gid}",
            getuid(),
            geteuid(),
            getgid(),
            getegid()
        ));
    }
    if setuid(Uid::from_raw(0)).is_ok() {
        return Err(format!("{RUN_AS_VAR}: root could be taken back after the drop: refusing to serve"));
    }
    Ok(Dropped::To(run_as))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_a_uid_or_a_uid_and_gid() {
        assert_eq!(RunAs::parse(None), Ok(None));
        assert_eq!(RunAs::parse(Some("")), Ok(None));
        assert_eq!(RunAs::parse(Some("  ")), Ok(None));
        assert_eq!(RunAs::parse(Some("10001")), Ok(Some(RunAs { uid: 10001, gid: 10001 })));
        assert_eq!(RunAs::parse(Some("10001:20")), Ok(Some(RunAs { uid: 10001, gid: 20 })));
        for bad in ["aztable", "10001:", ":10001", "-1", "10001:staff", "1:2:3", "4294967296"] {
            let e = RunAs::parse(Some(bad)).unwrap_err();
            assert!(e.starts_with("AZTABLE_RUN_AS=") && e.contains("must be a number"), "{bad}: {e}");
        }
        let e = RunAs::parse(Some("0:0")).unwrap_err();
        assert!(e.contains("leave it empty"), "{e}");
    }

    #[test]
    fn nothing_asked_is_nothing_done() {
        assert_eq!(drop_root(None), Ok(Dropped::NotAsked));
    }
}
