/** What the Discord surface keeps of a job after the moment it was made: one store, on the bots' state (see JobRecordStore). */
export type { JobRecordStore as DiscordJobStore, JobRecordPatch, NewJobRecord } from './JobRecordStore.js';
