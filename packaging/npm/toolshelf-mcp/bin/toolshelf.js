#!/usr/bin/env node
// Runs the toolshelf binary of this platform's package with this process's arguments, standard
// streams and environment, and ends as it ends: with its exit code, or by the signal that
// stopped it. Signals sent to this process are passed on, so a client that stops the server
// stops toolshelf, which stops its children.
"use strict";

const { spawn } = require("child_process");
const path = require("path");

// The platforms a package with the binary is published for: `${process.platform}-${process.arch}`.
const PACKAGES = {
  "linux-x64": "toolshelf-mcp-linux-x64",
};

function isMusl() {
  if (process.platform !== "linux") return false;
  const report = process.report && process.report.getReport ? process.report.getReport() : null;
  return !!report && !(report.header && report.header.glibcVersionRuntime);
}

function binary() {
  const platform = `${process.platform}-${process.arch}`;
  const name = PACKAGES[platform];
  const libc = isMusl() ? " (musl libc)" : "";
  const fromSource =
    "To build it from source instead (Rust 1.89+), see docs/install.md in toolshelf's repository.";
  if (!name || libc) {
    fail(
      `toolshelf-mcp: no toolshelf binary is published for ${platform}${libc}; ` +
        `packages exist for: ${Object.keys(PACKAGES).join(", ")} (glibc 2.17+). ${fromSource}`
    );
  }
  try {
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", "toolshelf");
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
