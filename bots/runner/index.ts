/** The platform-neutral job runner shared by the Discord and Slack bots. */
export { JobRunner, type JobRunnerOptions } from './JobRunner.js';
export {
  amountHint,
  ChatBudgets,
  CAP_NAMES,
  capOfName,
  notAdminMessage,
  parseCapAmount,
  TOP_USERS,
  type CapChange,
  type CapChangeRefusal,
  type CapName,
  type CapStatus,
  type ChatBudgetsOptions,
  type MemberRolesReader,
  type NamedRole,
  type RoleBudgetView,
  type UsageSummary,
} from './chat-budgets.js';
/** The ledger lives in the core's spend guard; re-exported for the bots. */
export { FileQuotaStore, RedisQuotaStore, type FileQuotaStoreOptions, type RedisQuotaStoreOptions } from 'pictor/internal';
export { refusalFromPolicy } from './describe-refusal.js';
export { RecentKeys } from './recent-keys.js';
export { JobRefusedError, isJobRefusedError, type JobRefusalDetails } from './JobRefusedError.js';
export { InputRefusedError, isInputRefusedError } from './InputRefusedError.js';
export { PressRefusedError, PRESS_REFUSAL_CODES, type PressRefusalCode } from './PressRefusedError.js';
export { describeFailure, describeKeptImages, describeValidation, INTERNAL_ERROR_CODE, logInputRefusal, logJobFailure, type FailureCode, type FailureDescription, type FailureLogMessages } from './describe-failure.js';
export { loggableError } from './loggable-error.js';
export { describeUsage, type UsageMarkup } from './describe-usage.js';
export { describeForgotten, historyLineValues } from './describe-history.js';
export {
  AuditLog,
  AuditChannelError,
  AuditPostLost,
  AuditEntrySchema,
  AUDIT_LIMITS,
  AUDIT_PROMPT_MAX,
  isAuditedRefusal,
  type AuditChannelProblem,
  type AuditEntry,
  type AuditLogOptions,
  type AuditPost,
  type AuditPoster,
  type AuditRecord,
  type AuditTrouble,
} from './audit-log.js';
export { auditGreeting, auditLinesOf, auditSkippedNote, auditSummary, changeAuditChannel, describeAuditTrouble, type AuditLines } from './describe-audit.js';
export { mayCancel } from './may-cancel.js';
export { readRunnerConfig, STOP_ALLOWANCE_MS, type RunnerConfig } from './config.js';
export { PreviewEncoder, PREVIEW_LONGEST_SIDE, type PreviewEncoderOptions } from './preview-image.js';
export type * from './types.js';
export { dmScopeId, isDmScope, POLICY_REFUSAL_CODES, RUNNER_REFUSAL_CODES } from './types.js';
export {
  ScopePolicy,
  DEFAULT_SETTINGS_CACHE_MS,
  defaultQualityFor,
  qualitiesFor,
  unreadableRulesRefusal,
  type EffectiveSetting,
  type EffectiveSettings,
  type OperatorControls,
  type ScopePolicyOptions,
  type SettingChangeRefusal,
  type SettingChangeResult,
  type SettingSource,
} from './scope-policy.js';
export {
  settingsInState,
  SETTING_NAMES,
  type ScopeSettings,
  type ScopeSettingsStore,
  type SettingChange,
  type SettingName,
  type StoredScopeSettings,
} from './scope-settings.js';
export { findBlockedWord, foldText, parseWordList } from './blocked-words.js';
export { changeSetting, describeSettings, repairSettings, type SettingAnswer } from './describe-settings.js';
export {
  HouseStyles,
  HOUSE_STYLE_LIMITS,
  PROMPT_PLACEHOLDER,
  STYLE_NAME_PATTERN,
  STYLE_NAME_MAX,
  applyStyleText,
  parseStyleText,
  styleText,
  StyleOptionsSchema,
  type HouseStyle,
  type HouseStyleRecord,
  type NamedStyle,
  type StyleChangeRefusal,
  type StyleChangeResult,
  type StyleOptions,
  type StyledJob,
} from './house-styles.js';
export { changeStyle, describeStyles, styleChoiceName } from './describe-styles.js';
export {
  MemberDefaultsBook,
  memberDefaultsInState,
  MemberDefaultsSchema,
  MEMBER_DEFAULT_NAMES,
  type AppliedDefaults,
  type MemberDefaultName,
  type MemberDefaults,
  type MemberDefaultsChange,
  type MemberDefaultsStore,
  type StoredMemberDefaults,
  type MemberDefaultView,
} from './member-defaults.js';
export { describeHowToChange, describeMemberDefaults, describeOwnDefaults, type MemberDefaultsCommands } from './describe-member-defaults.js';
export { isRangeField, rangeValueOf, rangeWords, RANGE_FIELDS, type RangeField } from './range-words.js';
export { CLEAR_VALUE, LIST_VERB, SETTING_WORDS, settingHint, settingOfWord, parseSettingValue, onOffOf, type SettingWord } from './setting-words.js';
export { COMMAND_NAMES } from './command-words.js';
export { JobHistory, type HistoryEntry, type JobHistoryState, type JobHistoryOptions } from './job-history.js';
export {
  anyOf,
  CATALOGS,
  DEFAULT_LOCALE,
  duration,
  elapsed,
  fileSize,
  listOf,
  localeOf,
  LOCALES,
  megabytes,
  nested,
  resetTime,
  say,
  sayWords,
  usd,
  utcDate,
  utcTime,
  words,
  type Catalog,
  type Formatted,
  type Locale,
  type Markup,
  type MessageKey,
  type MessageValue,
  type MessageValues,
  type Words,
} from './words.js';
export { scopeKeyOf, userKeyOf } from './member-keys.js';
