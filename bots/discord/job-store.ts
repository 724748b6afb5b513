import type { OutputFormat } from '../../src/index.js';
import type { InputImage } from '../runner/types.js';
import type { JobRecord } from './JobRecordStore.js';

export type NewJobRecord = Omit<JobRecord, 'inputs' | 'outputs' | 'createdAt'> & { createdAt?: number };
export type JobRecordPatch = Partial<Pick<JobRecord, 'status' | 'runnerJobId' | 'prompt' | 'sources'>>;

/**
 * What the Discord surface keeps of a job after the moment it was made: its
 * spec, its reply, its images (for Reroll, Retry and Edit), and drafts of the
 * "Edit image" menu. Two implementations: `JobRecordStore` (the data folder,
 * one process, `discord/jobs.json` as before) and `StateJobRecordStore` (the
 * bots' state store in Redis, shared by replicas).
 */
export interface DiscordJobStore {
  /** A new key (11 URL-safe characters). */
  newKey(): string;
  get(key: string): Promise<JobRecord | undefined>;
  /** Adds a record and saves its input images; while pending or running, this process holds it. */
  add(init: NewJobRecord, inputs?: readonly InputImage[]): Promise<JobRecord>;
  /** Changes a record's fields; a record that was dropped meanwhile is ignored. An ended job is released. */
  update(key: string, patch: JobRecordPatch): Promise<void>;
  /** The member's drafts of the "Edit image" menu, oldest first. */
  drafts(userId: string): Promise<JobRecord[]>;
  setInputs(key: string, images: readonly InputImage[]): Promise<void>;
  saveOutputs(key: string, images: readonly Buffer[], format: OutputFormat): Promise<void>;
  /** The record's input images; empty when any of them is no longer kept. */
  readInputs(key: string): Promise<InputImage[]>;
  readOutput(key: string, index: number): Promise<InputImage | undefined>;
  copyInputs(fromKey: string, toKey: string): Promise<void>;
  remove(key: string): Promise<void>;
  /**
   * Takes the pending or running records whose process is gone (at start: the
   * last one; with Redis also a replica whose lease lapsed), each for one
   * process only. The caller marks each interrupted (`update` to `failed`).
   */
  claimInterrupted(): Promise<JobRecord[]>;
  /** Whether the job runs in another live process (a replica), not this one. */
  runsElsewhere(key: string): Promise<boolean>;
  close(): Promise<void>;
}
