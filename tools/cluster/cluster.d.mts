import type { ChildProcess } from 'node:child_process';

/** The bearer token of every process's /metrics. */
export declare const METRICS_TOKEN: string;
/** HAProxy's health-check timing. */
export declare const CHECK: { interMs: number; fall: number; rise: number; timeoutMs: number };

export interface ClusterProcess {
  readonly name: string;
  /** An API replica's port and direct URL (bypassing the proxy); undefined for a worker. */
  readonly port?: number;
  readonly base?: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  readonly child: ChildProcess | null;
  /** How many times it was started. */
  readonly starts: number;
  /** The current run's exit. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null } | null>;
  readonly env: Record<string, string>;
  start(): ClusterProcess;
  stop(
    signal?: NodeJS.Signals,
    timeoutMs?: number,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null } | null>;
  ready(timeoutMs?: number): Promise<void>;
  metrics(): Promise<string>;
}

export interface Cluster {
  /** The proxy's URL: every request of a test goes here unless it names a replica. */
  readonly base: string;
  readonly database: { name: string; url: string };
  readonly redisUrl: string;
  readonly replicas: ClusterProcess[];
  readonly workers: ClusterProcess[];
  addWorker(): Promise<ClusterProcess>;
  serverStates(): Promise<Record<string, string>>;
  /** Takes a replica out of rotation (HAProxy's `maint`) or puts it back. */
  setServing(name: string, serving: boolean): Promise<void>;
  waitForState(name: string, state: 'UP' | 'DOWN', timeoutMs?: number): Promise<number>;
  logs(name: string): string;
  stop(): Promise<void>;
}

export declare function startCluster(options?: {
  replicas?: number;
  workers?: number;
  env?: Record<string, string>;
  apiEnv?: Record<string, string>;
  workerEnv?: Record<string, string>;
  drainMs?: number;
  /** HAProxy's `balance` (default `roundrobin`). */
  balance?: string;
}): Promise<Cluster>;
