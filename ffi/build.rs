//! Gives the shared library a versioned SONAME on ELF platforms, so that programs linked against
//! it record the ABI they were built for (`DT_NEEDED libdepositkit.so.0.1`), not the bare
//! development name `libdepositkit.so`.
//!
//! The rule is cargo's semver one (and cargo-c's): for 0.x releases every minor version may
//! break the ABI, so the SONAME is `libdepositkit.so.0.MINOR`; from 1.0 on it is
//! `libdepositkit.so.MAJOR`. cargo writes the library as `target/<profile>/libdepositkit.so`;
//! `scripts/install-c.sh` installs it as `libdepositkit.so.<version>` with the SONAME link and the
//! `libdepositkit.so` development link beside it (it reads the SONAME from the built file).

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let elf = matches!(
        target_os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly"
    );
    if !elf {
        return;
    }
    let major = env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets CARGO_PKG_VERSION_MAJOR");
    let minor = env::var("CARGO_PKG_VERSION_MINOR").expect("cargo sets CARGO_PKG_VERSION_MINOR");
    let soname = if major == "0" {
        format!("libdepositkit.so.0.{minor}")
    } else {
        format!("libdepositkit.so.{major}")
    };
    // Only the cdylib is linked with it: the staticlib and the rlib are not linked at all.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
}
