/**
 * A Docker daemon of one test's own, to stop and start again at will: the shared daemon must
 * stay up for every other suite. No bridge and no iptables rules (sandbox runs have no network),
 * its own socket, data and exec roots under a short temporary path (socket paths are limited
 * to 108 bytes), and the sandbox image copied in from the shared daemon.
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Docker from 'dockerode';

export class PrivateDockerDaemon {
  readonly dir = fs.mkdtempSync('/tmp/repost-dockerd-');
  readonly socket = path.join(this.dir, 'd.sock');
  readonly docker = new Docker({ socketPath: this.socket });
  private daemon: ChildProcess | null = null;

  /** For DOCKER_HOST, so dockerode (and the docker CLI) in another process talk to this daemon. */
  get host(): string {
    return `unix://${this.socket}`;
  }

  async start(): Promise<void> {
    if (process.getuid?.() !== 0) throw new Error('starting a private dockerd needs root');
    const log = fs.openSync(path.join(this.dir, 'dockerd.log'), 'a');
    this.daemon = spawn(
      'dockerd',
      ['--host', this.host, '--data-root', path.join(this.dir, 'root'), '--exec-root', path.join(this.dir, 'x'), '--pidfile', path.join(this.dir, 'd.pid'),
        '--bridge=none', '--iptables=false', '--ip6tables=false'],
      { stdio: ['ignore', log, log] },
    );
    fs.closeSync(log);
    const deadline = Date.now() + 60_000;
    while (!(await this.docker.ping().then(() => true, () => false))) {
      if (Date.now() > deadline) throw new Error(`the private dockerd did not start: ${fs.readFileSync(path.join(this.dir, 'dockerd.log'), 'utf8').slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async stop(): Promise<void> {
    const d = this.daemon;
    this.daemon = null;
    if (!d || d.exitCode !== null) return;
    const exited = new Promise((r) => d.once('exit', r));
    d.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
    if (d.exitCode === null) d.kill('SIGKILL');
  }

  /** Copies an image from the shared daemon into this one. */
  loadImage(tag: string): void {
    execSync(`docker save ${tag} | docker -H ${this.host} load`, { stdio: 'ignore', shell: '/bin/bash' });
  }

  async dispose(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
