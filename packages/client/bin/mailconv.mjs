#!/usr/bin/env node
// The `mailconv` command (package.json "bin"): committed executable, so it works whatever
// mode the build gave dist/cli.js.
import { runFromProcess } from '../dist/cli.js';

process.exitCode = await runFromProcess();
