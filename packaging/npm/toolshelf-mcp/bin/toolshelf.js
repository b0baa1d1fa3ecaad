#!/usr/bin/env node
// Runs the toolshelf binary of this platform's package with this process's arguments, standard
// streams and environment, and ends as it ends: with its exit code, or by the signal that
// stopped it. Signals sent to this process are passed on, so a client that stops the server
// stops toolshelf, which stops its children.
"use strict";

const { spawn } = require("child_process");
const path = require("path");

// The packages with a binary, one per platform, named `toolshelf-mcp-${process.platform}-${process.arch}`:
// this package's optional dependencies, of which npm installs the one whose `os`, `cpu` and `libc`
// match this machine.
const PACKAGES = Object.keys(require("../package.json").optionalDependencies);

function isMusl() {
  if (process.platform !== "linux") return false;
  const report = process.report && process.report.getReport ? process.report.getReport() : null;
  return !!report && !(report.header && report.header.glibcVersionRuntime);
}

function binary() {
  const platform = `${process.platform}-${process.arch}`;
  const name = PACKAGES.find((name) => name === `toolshelf-mcp-${platform}`);
  const libc = isMusl() ? " (musl libc)" : "";
  const fromSource =
    "To build it from source instead (Rust 1.89+), see docs/install.md in toolshelf's repository.";
  if (!name || libc) {
    fail(
      `toolshelf-mcp: no toolshelf binary is published for ${platform}${libc}; ` +
        `packages exist for: ${PACKAGES.map((name) => name.replace("toolshelf-mcp-", "")).join(", ")} ` +
        `(Linux with glibc 2.17+). ${fromSource}`
    );
  }
  try {
    const file = process.platform === "win32" ? "toolshelf.exe" : "toolshelf";
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", file);
  } catch (error) {
    fail(
      `toolshelf-mcp: the package ${name}, which holds the binary for ${platform}, is not installed ` +
        `(npm skips optional dependencies with --omit=optional or --no-optional). ` +
        `Reinstall without those flags, or: npm install ${name}. ${fromSource}`
    );
  }
}

function fail(message) {
  process.stderr.write(message + "\n");
  process.exit(1);
}

const program = binary();
const child = spawn(program, process.argv.slice(2), { stdio: "inherit" });

const passOn = (signal) => () => child.kill(signal);
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
for (const signal of forwarded) process.on(signal, passOn(signal));

child.on("error", (error) => fail(`toolshelf-mcp: cannot run ${program}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, with the default action back in place.
    for (const name of forwarded) process.removeAllListeners(name);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
