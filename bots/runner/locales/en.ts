/**
 * English: the source catalog. Every other language has exactly these keys and
 * the same placeholders (locales/README.md). ICU MessageFormat: `{name}`,
 * `{n, plural, one {…} other {…}}`, `{kind, select, a {…} other {…}}`,
 * `<b>bold</b>`; write apostrophes as ’ (an ASCII ' is ICU's escape).
 */
export const en = {
  // Times and amounts shared by other messages.
  'time.resets': '{at} (in {wait})',
  'time.days': '{days, plural, one {# day} other {# days}}',

  // Refusals: before anything is reserved or sent (codes in JobRefusedError).
  'refusal.restarting': 'The bot is restarting; try again in a minute.',
  'refusal.scope_not_allowed':
    'This bot is not enabled for {scope, select, workspace {this workspace} other {this server}}: its operator has not allowed it here, so it makes no images. Ask the bot’s operator to add {scope, select, workspace {this workspace} other {this server}}.',
  'refusal.dms_not_enabled':
    'This bot makes images only in the servers it was added to: its operator has not turned on DMs and user installs. Use it in one of those servers.',
  'refusal.member_blocked':
    'An admin of {scope, select, workspace {this workspace} other {this server}} has blocked you from making images here; ask one of them if you think this is a mistake.',
  'refusal.channel_not_allowed': 'Images can’t be made in this channel; use {channels}.',
  'refusal.member_not_allowed':
    'The admins of {scope, select, workspace {this workspace} other {this server}} have chosen who may make images, and you are not among them; ask one of them for access.',
  'refusal.blocked_word': 'Your prompt contains “{word}”, which is blocked here; rephrase it and try again.',
  'refusal.too_many_images': 'At most {limit} {limit, plural, one {image} other {images}} per job can be made here; ask for fewer.',
  'refusal.quality_not_allowed': 'That quality is not allowed here; choose one of {allowed}.',
  'refusal.high_quality_not_allowed':
    'Quality high is kept for some members of {scope, select, workspace {this workspace} other {this server}}; choose another quality or ask an admin.',
  'refusal.size_not_allowed': 'That size is not allowed here; choose one of {allowed}.',
  'refusal.moderation_not_allowed':
    'Moderation low is not allowed here; leave moderation unset to use {scope, select, workspace {this workspace} other {this server}}’s level.',
  'refusal.user_concurrency':
    'You already have {used} {used, plural, one {job} other {jobs}} queued or running, the most allowed at once ({limit}); wait for one to finish or cancel it.',
  'refusal.user_cooldown': 'You can start one job every {every}; try again in {wait}.',
  'refusal.scope_paused':
    '{scope, select, workspace {This workspace} dm {Your use of the bot outside servers} other {This server}} is paused: it spent {used} in the last hour, more than the {limit} an hour its usual use allows. No new jobs are taken until the bot’s operator (who pays for its API key) resumes it from the Pictor console.',
  'refusal.budget_reached':
    '{owner, select, user {You have reached your} scope {{scope, select, workspace {This workspace has} dm {Your use of the bot outside servers has} other {This server has}} reached its} other {The whole account (every server, workspace and tool sharing this API key) has reached its}} {period, select, day {daily} other {monthly}} budget of {limit} (spent {used}, {left} left); it resets at {reset}.',
  'refusal.budget_would_pass':
    'This job could cost up to {estimate}, more than the {left} left of {owner, select, user {your} scope {{scope, select, workspace {this workspace’s} dm {your use of the bot outside servers’s} other {this server’s}}} other {the whole account’s}} {period, select, day {daily} other {monthly}} budget of {limit} (spent {used}); fewer or cheaper images may fit, and the budget resets at {reset}.',
  'refusal.other_limit': 'This job was refused by the limit {code}.',
  'refusal.queue_full':
    'The bot is busy: {queued} jobs are waiting, the most it queues at once ({max}), so this one was not started and costs nothing; {known, select, yes {at the present pace a new job would wait about {wait}, so try again then.} other {none has been sent in the last minute, so try again in a few minutes.}}',
  'refusal.queue_full_images':
    'The bot is busy: the edits waiting hold {held} of images, and this one’s {job} would pass the most it keeps at once ({max}), so it was not started and costs nothing; {known, select, yes {at the present pace a new job would wait about {wait}, so try again then.} other {none has been sent in the last minute, so try again in a few minutes.}}',
  'refusal.input_too_large':
    'This edit’s images come to {job}, more than this bot takes at once ({max}), so it was not started and costs nothing; use fewer or smaller images.',

  // Failures: a job that was admitted and did not finish (codes of the core's errors).
  'failure.internal_error': 'Something went wrong inside the bot; try again, and tell the bot’s operator if it keeps happening.',
  'failure.ledger_busy': 'The bot’s spending record was busy with another process, so the job was not sent and costs nothing; try again in a moment.',
  'failure.ledger_unreadable': 'The bot cannot read its spending record, so it cannot run jobs for now; tell the bot’s operator.',
  'failure.quota_store_closed': 'The bot is stopping, so it could not go on with this job; try again in a minute.',
  'failure.validation':
    '{subject, select, prompt {The prompt is not valid} image {An input image is not valid} other {The {option} option is not valid}}: {detail}{allowed, select, some { (allowed: {values})} other {}}.',
  'failure.validation_range': '{option} must be {range}',
  'failure.validation_prompt_empty': 'it is empty; write what the image should show',
  'failure.validation_prompt_too_long': 'it is longer than {max, number} characters; shorten it',
  'failure.validation_one_of': '{option} must be {values}',
  'failure.validation_size': '{option} must be {values} (width x height, in pixels)',
  'failure.validation_transparent_format': '{option} must be {formats} when {background} is transparent ({given} has no transparency)',
  // A validation rule the catalogs have no words for: the whole sentence in English (the core's detail is English).
  'failure.validation_english': '{sentence}',
  'failure.moderation_blocked': 'The image service refused this request under its content policy; change the prompt (or the images) and try again.',
  'failure.rate_limited': 'The image service is busy right now; try again in {known, select, yes {about {wait}} other {about a minute}}.',
  'failure.quota_exhausted': 'The image service account is out of credit; tell the bot’s operator.',
  'failure.authentication_failed': 'The image service did not accept the bot’s API key; tell the bot’s operator.',
  'failure.permission_denied': 'The image service does not let the bot’s account use this model; tell the bot’s operator.',
  'failure.not_found': 'The bot is set up with a wrong image service address; tell the bot’s operator.',
  'failure.bad_request_option': 'The image service rejected the option {option}; change it and try again.',
  'failure.bad_request': 'The image service rejected the request; check the options and images and try again.',
  'failure.server_error':
    '{kind, select, stream {The image service reported an error while making the images} overloaded {The image service is overloaded and did not answer after several tries} other {The image service had an internal error and did not recover after several tries}}; try again {known, select, yes {in about {wait}} other {in a few minutes}}.',
  'failure.api_error': 'The image service answered with an unexpected error; try again in a few minutes.',
  'failure.connection_failed': 'The bot could not reach the image service; try again in a few minutes.',
  'failure.timeout':
    '{kind, select, idle {The image service sent nothing for {howLong}, so the job was stopped.} other {The job took longer than {howLong}, so it was stopped.}} It had reached the service and may have been billed (its estimate counts against the budget), so it was not sent again; Retry starts a new job, perhaps at a lower quality.',
  'failure.stream_broken':
    'The connection to the image service broke after the request reached it, before all the images arrived. It may have been billed (the estimate of each missing image counts against the budget), so it was not sent again; Retry starts a new job.',
  'failure.aborted': 'The job was stopped before it finished; try again.',
  'failure.bad_response': 'The image service answered with something that is not the images asked for; it may have been billed, so it was not sent again.',

  // A job's own messages, on both surfaces.
  'job.queue_trouble': 'The shared queue is unreachable for a moment, so this takes longer than usual; your job keeps its place and nothing is charged until it runs.',
  'job.kept_images': '{count, plural, one {The image finished before that is here; it is charged.} other {The # images finished before that are here; they are charged.}}',
  'job.prompt_erased': 'The prompt of this job was erased at the request of the member who asked for it, so it cannot run again. Start a new job instead.',

  // Usage (`/imagine-usage`, `/imagine usage`, the Home tab).
  'usage.your_spend': '<b>Your spend</b> (UTC): {today} today · {month} this month',
  'usage.no_budget': 'No budget applies to you: the bot’s operator set none.',
  'usage.budgets': '<b>Budgets</b>',
  'usage.cap':
    '• {whose, select, user {Your} account {The whole account’s} other {{scope, select, dm {Your} workspace {This workspace’s} other {This server’s}}}} {period, select, day {daily} other {monthly}} budget{whose, select, scope {{scope, select, dm { outside servers} other {{setBy, select, chat { (set by a {scope, select, workspace {workspace} other {server}} admin)} other {}}}}} other {{setBy, select, chat { (set by a {scope, select, workspace {workspace} other {server}} admin)} other {}}}}: {left} left of {limit} (spent {spent}); resets {reset}',
  'usage.scope_spend': '<b>{scope, select, workspace {This workspace} other {This server}}</b> (UTC): {today} today · {month} this month',
  'usage.no_jobs_yet': 'No finished jobs this month yet.',
  'usage.top_users': 'Top users this month:',
  'usage.top_user': '{rank}. {user} {usd} ({jobs} {jobs, plural, one {job} other {jobs}})',

  // Budgets set from chat (`/imagine-admin budget`, `/imagine admin budget`).
  'budget.amount_hint': 'Give the budget in US dollars, 0 or more (e.g. 2.50), or clear to go back to the operator’s setting.',
  'budget.not_admin': 'Only an admin of {scope, select, workspace {this workspace} other {this server}} can change its budgets.',
  'budget.above_operator_cap':
    'The bot’s operator caps {whose, select, user {the {period, select, day {daily} other {monthly}} budget of each user} other {{scope, select, workspace {this workspace’s} other {this server’s}} {period, select, day {daily} other {monthly}} budget}} at {operator} ({variable}); an admin can set it lower, not higher. Ask the operator to raise it.',
  'budget.cleared':
    '{whose, select, user {The {period, select, day {daily} other {monthly}} budget of each user} other {{scope, select, workspace {This workspace’s} other {This server’s}} {period, select, day {daily} other {monthly}} budget}} is back to the operator’s setting ({operatorSet, select, yes {{operator}} other {no limit}}).',
  'budget.set':
    '{whose, select, user {The {period, select, day {daily} other {monthly}} budget of each user} other {{scope, select, workspace {This workspace’s} other {This server’s}} {period, select, day {daily} other {monthly}} budget}} is now {usd} for {scope, select, workspace {this workspace} other {this server}} (operator’s cap: {operatorSet, select, yes {{operator}} other {none}}).',

  // A server's/workspace's settings (`/imagine-admin settings|set`, `/imagine admin settings|set`).
  'settings.not_admin': 'Only an admin of {scope, select, workspace {this workspace} other {this server}} can change its settings.',
  'settings.unknown': 'Choose one of {names}.',
  'settings.takes': '{setting} takes {hint}.',
  'settings.changed': '{setting} is now {value} (was {wasDefault, select, yes {the default} unreadable {a value that could not be read} other {{was}}}).',
  'settings.cleared': '{setting} is back to its default (was {wasDefault, select, yes {the default} unreadable {a value that could not be read} other {{was}}}).',
  'settings.repaired': '{count, plural, =0 {Every setting of {scope, select, workspace {this workspace} other {this server}} can be read: nothing was cleared.} one {Cleared the setting that could not be read, back to its default: {settings}. Every other setting is unchanged.} other {Cleared the # settings that could not be read, back to their defaults: {settings}. Every other setting is unchanged.}}',
  'settings.repair_left':
    '{count, plural, one {Left as it is: {settings}, well-formed but written by a newer version of the bot, which this one cannot read. Set or clear it by hand.} other {Left as they are: {settings}, well-formed but written by a newer version of the bot, which this one cannot read. Set or clear each by hand.}}',
  'settings.repair_unrestricted':
    '⚠️ Now unrestricted: {settings}. Set again what should still hold{budgets, select, yes { — each {scope, select, workspace {user group’s} other {role’s}} budget with {scope, select, workspace {{command} admin budget @group user-daily …} other {/{admin} budget cap:user-daily usd:… role:@role}}; until then every member has the budget of each user} other {}}.',
  'settings.role_budgets': 'role budgets',
  'settings.at_most': 'at most {max}',
  'settings.too_many': '{setting} may hold at most {max}: nothing was changed. Remove some, or set a shorter whole value.',
  'settings.beyond_operator': 'The bot’s operator allows {allowed} for {setting}; an admin can choose within that, not beyond. Ask the operator to change it.',
  'settings.beyond_scope':
    '{scope, select, workspace {This workspace’s} other {This server’s}} own {list} setting allows {allowed}, so {setting} can only be one of those. An admin can add it to {list} first, then set {setting}.',
  'settings.unmatchable_words':
    '{setting} cannot take {entries}: {count, plural, one {it has} other {they have}} no letter, digit, emoji or symbol to match, so {count, plural, one {it} other {they}} would block nothing. Nothing was changed.',
  'settings.title':
    'Settings of {scope, select, workspace {this workspace} other {this server}} — where each comes from: operator (the bot’s environment), admin (set here), default.',
  'settings.allowed_here':
    '• bot allowed here: {allowed, select, yes {yes} other {no — the operator has not allowed {scope, select, workspace {this workspace} other {this server}}, so every job is refused}} (operator)',
  'settings.line': '• {setting}: {value} ({source})',
  'settings.default_quality_unlisted': '• {setting}: {value} ({source}); whoever {list} does not list gets {quality}',
  'settings.operator_words': '• operator’s blocked words (everywhere): {words} (operator)',
  'settings.source': '{source, select, operator {operator} admin {admin} other {default}}',
  'settings.source_admin': 'admin: {who}, {when}',
  'settings.how_to_change': 'Change one with {command} (clear for the default; add or remove for lists).',
  'settings.unreadable_rules':
    '⚠️ {count, plural, one {A rule} other {# rules}} of {scope, select, workspace {this workspace} other {this server}} cannot be read, so every job here is refused until an admin clears what cannot be read with {platform, select, slack {`{command} admin repair`} other {`/{admin} repair`}}, or sets each again or clears it (below).',
  'settings.would_open':
    '{setting, select, channels {Removing the last channel from channels would open the bot to every channel} qualities {Removing the last quality from qualities would open every quality} sizes {Removing the last size from sizes would open every size} other {Removing the last one from {setting} would open it to everyone}}: nothing was changed. To do that, use `clear`.',
  'settings.unreadable_merge':
    '{setting} cannot be read (damaged in the bot’s storage), so nothing can be {op, select, add {added to it} other {removed from it}}: set its whole value again, or clear it.',
  'settings.unreadable_line':
    '• {setting}: ⚠️ cannot be read (damaged in the bot’s storage) — {restriction, select, yes {every job is refused until an admin sets it again or clears it} other {its default, {value}, applies until an admin sets it again}}',
  'settings.empty.channels': 'every channel',
  'settings.empty.allowed': 'everyone',
  'settings.empty.blocked': 'nobody',
  'settings.empty.none': 'none',
  'settings.empty.highQualityFor': 'whoever may use it',
  'settings.hint.channels': 'channel mentions (#art #memes); clear for every channel',
  'settings.hint.allowed': 'user or role mentions (@artists @sam); clear for everyone',
  'settings.hint.blocked': 'user mentions (@sam)',
  'settings.hint.blockedWords': 'words or phrases separated by commas (gore, red fox)',
  'settings.hint.highQualityFor': 'user or role mentions who may use quality high; clear for everyone who may use it',
  'settings.hint.slack.allowed': 'user mentions (@sam @ana), not user groups; clear for everyone',
  'settings.hint.slack.highQualityFor': 'user mentions (@sam), not user groups, who may use quality high; clear for everyone who may use it',
  'settings.hint.someOf': 'one or more of {values}',
  'settings.hint.oneOf': 'one of {values}',
  'settings.hint.moderation': '{low} or {auto}',
  'settings.hint.number': 'a whole number from {min} to {max}',

  // Buttons, on both surfaces.
  'button.cancel': 'Cancel',
  'button.retry': 'Retry',
  'button.reroll': 'Reroll',
  'button.delete': 'Delete',
  'button.edit': 'Edit',
  'button.edit_image': '{images, plural, one {Edit} other {Edit {index}}}',

  // Discord: a job's reply (in the server's language: everyone in the channel reads it).
  'discord.job.getting_ready': '⏳ Getting ready…',
  'discord.job.queued': '{ahead, plural, =0 {⏳ Next in line…} one {⏳ In the queue: # job ahead of yours.} other {⏳ In the queue: # jobs ahead of yours.}}',
  'discord.job.drawing': '🎨 Drawing {n, plural, one {{kind, select, edit {the edit} other {the image}}} other {# images}}…',
  'discord.job.preview': '🎨 Drawing… preview {preview}{n, plural, one {} other { (image {image} of {n})}}',
  'discord.job.cost': '{basis, select, table {{usd}} other {up to {usd} (estimate)}}',
  'discord.job.elapsed': '{time}',
  'discord.job.restarted_before_done': '🔌 The bot restarted before this was done; press Retry to run it again.',
  'discord.job.cancelled_by': '✖️ Cancelled by {user}.',
  'discord.job.charged': '💵 Charged {usd}: the request had reached the image service.',
  'discord.job.may_be_charged': '💵 May be charged {usd}: the request had reached the image service, and its charge is not settled yet.',
  'discord.job.interrupted': '🔌 This job stopped when the bot restarted; press Retry to run it again.',
  'discord.job.interrupted_no_retry': '🔌 This job stopped when the bot restarted, and it cannot run again: start a new one with /{imagine} or /{edit}.',
  'discord.job.result_gone': '🔌 This job finished just as the bot restarted, but its result could not be shown then, and its images are no longer kept. They were made and charged; start a new job with /{imagine} or /{edit} if you still need them.',
  'discord.job.result_kept_unshown': '🔌 This job finished just as the bot restarted, but its result could not be shown then. Here are its images; they were made and charged.',
  'discord.job.some_no_longer_kept': 'This job finished just as the bot restarted, and {missing, plural, one {one of its {made} images is} other {# of its {made} images are}} no longer kept: made and charged, but not shown here.',
  'discord.job.too_large_to_upload': '{images, plural, one {The image} other {Image {index}}} is too large to upload here (limit {limit} per file), even re-encoded.',
  'discord.job.reencoded':
    '{images, plural, one {The image} other {Image {index}}} was re-encoded as {format}{shrunk, select, yes { and shrunk to {percent}%} other {}} to fit the upload limit that applies here ({limit} per file).',
  'discord.job.more_images': 'More images ({from}–{to} of {of})',
  'discord.job.upload_separately': 'The images were too large to upload together here; they follow in separate messages.',
  'discord.job.file_not_sent': 'Discord refused {file} as too large, and it could not be made small enough: it is not shown here.',
  'discord.job.files_may_be_missing': '{count, plural, one {An image} other {{count} images}} may be missing ({files}): Discord did not confirm {count, plural, one {the message with it} other {the messages with them}}. The bot does not send {count, plural, one {it} other {them}} again, so that nothing shows twice, and no button here sends {count, plural, one {it} other {them}} again.',
  'discord.job.reply_may_be_missing': 'This job’s reply may be missing: Discord did not confirm the message with it. The bot does not send it again, so that nothing shows twice.',
  'discord.job.end_posted_elsewhere': '{where, select, dm {📨 Discord would not update this message, so this job’s result was sent by direct message to the person who asked for it.} other {⬇️ Discord would not update this message, so this job’s result is posted below in this channel.}}',
  'discord.job.end_may_be_posted_elsewhere': '{where, select, dm {📨 Discord would not update this message, so this job’s result may have been sent by direct message to the person who asked for it: Discord did not confirm it.} other {⬇️ Discord would not update this message, so this job’s result may be posted below in this channel: Discord did not confirm it.}}',
  'discord.job.reply_not_delivered': 'This job’s reply, with its buttons{count, plural, =0 {} one { and the image {files}} other { and # images ({files})}}, could not be delivered: Discord failed to open this direct message when the bot tried to send it.',
  'discord.job.end_not_sent_by_dm': '📭 This job’s result could not be shown: Discord would not update its message, and the direct message the bot tried to send it in did not go through.',
  'discord.job.end_not_delivered': '📭 Discord would not update this message, and this job’s result could not be delivered elsewhere either.',

  // History (`/imagine-history`, `/imagine history`).
  'history.none_kept': '{icon} This bot keeps no history.',
  'history.erased': '{icon} Erased your history ({count} {count, plural, one {job} other {jobs}}). Images already posted stay in their channels.',
  'history.not_admin': '{icon} Only an admin of {scope, select, workspace {this workspace} other {this server}} can see its history.',
  'history.outside_servers': '{icon} There is no server history here: outside the servers the bot is in (a DM, a group DM, a server where only you added the app), /{imagineHistory} shows only your own jobs.',
  'history.title': '{whose, select, scope {<b>{scope, select, workspace {This workspace’s} other {This server’s}} recent images</b>} other {<b>Your last images</b> (only you see this)}}',
  'history.empty': 'Nothing yet.',
  'history.reroll_numbered': 'Reroll {index}',
  'discord.history.line':
    '{rank}. {when}{author} “{prompt}” · {n} × {size, select, default {default size} other {{size}}}, {quality, select, default {default quality} other {{quality}}} · {status, select, completed {{costKnown, select, yes {{cost}} other {completed}}} failed {failed{costKnown, select, yes { · {cost}} other {}}} other {cancelled{costKnown, select, yes { · {cost}} other {}}}}{hasLink, select, yes { · [message]({link})} other {}}',

  // Discord: private answers (in the member's language).
  'discord.settings.not_admin': '✋ Only an admin of this server can see and change its settings.',
  'discord.admin.outside_servers': '/{admin} only works inside a server the bot is in. Here (a DM, a group DM, or a server where only you added the app) there is no server budget, setting or style to change.',
  'discord.unknown_interaction': 'I do not know that command or button (it may be from an older version of me).',
  'discord.button.too_old': 'This job is too old: I no longer keep what it needs. Start a new one with /{imagine} or /{edit}.',
  'discord.button.unknown': 'That button does not do anything any more.',
  'discord.button.finished': 'This job has already finished.',
  'discord.button.already_retried': 'Retry was already pressed for this job: it runs once, so nothing was sent again.',
  'discord.button.retry_starting': 'Your first press of Retry is still starting this job: if it does not run, press Retry again in a moment.',
  'discord.button.too_late_to_cancel': 'This job is about to finish and can no longer be cancelled.',
  'discord.button.only_requester': 'Only {user} or an admin can {action, select, delete {delete this message} other {cancel this job}}.',
  'discord.button.not_member': '{why, select, gone {You are no longer a member of the server this job was made in, so its buttons do nothing for you.} other {I could not check your roles in the server this job was made in just now, so nothing was started; press again in a moment.}}',
  'discord.button.runs_elsewhere': 'This job is being drawn by another instance of the bot, which could not be reached: it will show its result when done.',
  'discord.button.being_shown': 'This job’s end is being shown now, here or in a new message.',
  'discord.button.not_updated': 'This job’s message could not be updated just now; press Cancel again in a moment.',
  'discord.edit.title_result': '{images, plural, one {Edit image} other {Edit image {index}}}',
  'discord.edit.title_message': '{images, plural, one {Edit image} other {Edit # images}}',
  'discord.edit.form_expired': 'This edit form is too old: I no longer have its images. Use “Edit image” on the message again.',
  'discord.edit.image_gone': 'That image is no longer kept; edit a newer one, or use /{edit} with the file.',
  'discord.edit.placeholder': 'e.g. make it night, with a full moon',
  'discord.edit.message_image': '{images, plural, one {the image of that message} other {image {index} of that message}}',
  'discord.edit.message_has_no_images': 'That message has no images to edit (PNG, JPEG or WebP attachments).',
  'discord.edit.message_has_too_many': 'An edit takes at most {max} images, and that message has {count}.',
  'discord.edit.message_links_elsewhere': 'I only edit images that are uploaded to Discord, and that message links to images elsewhere.',
  'discord.input.no_images': 'There is no image to edit: attach a PNG, JPEG or WebP image.',
  'discord.input.too_many': 'An edit takes at most {max} images, and there are {count}.',
  'discord.input.host_not_allowed': 'I only download images that are uploaded to Discord, and {label} is not hosted there; upload the file itself.',
  'discord.input.too_large': '{file} ({label}) is {size}; each image must be under {max}.',
  'discord.input.too_large_read': '{file} ({label}) is too large; {why, select, limit {each image must be under {max}} other {it is larger than Discord said; attach it again}}.',
  'discord.input.download_failed': 'I could not download {label} ({file}) from Discord; its link may have expired, so attach it again.',
  'discord.input.not_an_image': '{file} ({label}) is not a PNG, JPEG or WebP image.',

  // Both surfaces.
  'edit.what_should_change': 'What should change?',
  'error.on_my_side': 'Something went wrong on my side; try again in a moment.',

  // Discord: the commands as Discord lists them (names lowercase, at most 32 letters, digits, - or _; descriptions at most 100 characters).
  'discord.command.imagine.name': 'imagine',
  'discord.command.imagine.description': 'Draw images from a text prompt',
  'discord.command.edit.name': 'edit',
  'discord.command.edit.description': 'Edit or combine images with a text prompt',
  'discord.command.edit_image.name': 'Edit image',
  'discord.command.usage.name': 'imagine-usage',
  'discord.command.usage.description': 'What you spent today and this month, and what is left of your budgets',
  'discord.command.history.name': 'imagine-history',
  'discord.command.history.description': 'Your last 10 images, privately; admins can see the server’s; forget erases yours',
  'discord.command.admin.name': 'imagine-admin',
  'discord.command.admin.description': 'Server admins: change this server’s image budgets',
  'discord.command.admin.budget': 'Set a budget of this server, at most the operator’s cap; clear goes back to the operator’s setting',
  'discord.command.admin.settings': 'Show every setting of this server and where it comes from (operator or admin)',
  'discord.command.admin.set': 'Change a setting of this server, within what the operator allows',
  'discord.command.admin.repair': 'Clear only the settings of this server that cannot be read, back to their defaults',
  'discord.option.prompt_imagine': 'What to draw',
  'discord.option.prompt_edit': 'What to change',
  'discord.option.image': '{first, select, yes {The image to edit (PNG, JPEG or WebP)} other {Another image (PNG, JPEG or WebP)}}',
  'discord.option.size': 'Width x height of the result',
  'discord.option.quality': 'Higher quality costs more and takes longer',
  'discord.option.background': 'transparent needs format {formats}',
  'discord.option.format': 'File format of the result',
  'discord.option.count': 'How many images',
  'discord.option.show': 'Whose history (default: yours)',
  'discord.option.cap': 'Which budget',
  'discord.option.usd': 'US dollars, 0 or more (e.g. 2.50), or clear for the operator’s setting',
  'discord.option.setting': 'Which setting',
  'discord.option.value': '#channels, @roles/@members, words, a number…; clear for the default; add …/remove … for lists',
  'discord.choice.size': '{size} {shape, select, square {square} landscape {landscape} other {portrait}}{isDefault, select, yes { (default)} other {}}',
  'discord.choice.quality': '{quality, select, auto {auto (the service picks)} other {{quality}}}{isDefault, select, yes { (default)} other {}}',
  'discord.choice.background': '{background, select, transparent {transparent (needs format {formats})} other {{background}}}{isDefault, select, yes { (default)} other {}}',
  'discord.choice.format': '{transparent, select, yes {{format}} other {{format} (no transparency)}}{isDefault, select, yes { (default)} other {}}',
  'discord.choice.show': '{show, select, mine {mine} server {server (admins)} other {forget mine (erase it)}}',

  // Slack: a job's messages (in the language of the member who asked: Slack has no workspace language).
  'button.try_again': 'Try again',
  'slack.job.header': '{user} {kind, select, edit {asked to edit {inputs, plural, one {an image} other {# images}}} other {asked for}}: {prompt}',
  'slack.job.text': 'Pictor: {status}',
  'slack.job.plain_status':
    '{stage, select, queued {{ahead, plural, =0 {queued} other {queued, # ahead}}} running {drawing…} posting {made ({summary}), posting the images} done {done ({summary})} not_posted {made, but could not post the images} failed {failed: {failure}} other {cancelled}}',
  'slack.job.actions_text': 'Reroll, Edit or Delete: {prompt}',
  'slack.job.finished_where':
    '{where, select, posting {That job is done: its images are being posted, with Reroll, Edit and Delete right after them.} dm {That job is done: its images and their Reroll, Edit and Delete buttons were sent to the direct messages of the person who asked for it.} link {That job is done: its images and their Reroll, Edit and Delete buttons are <{link}|here>.} other {That job is done: its images are posted after its message, with their Reroll, Edit and Delete buttons.}}',
  'slack.job.caption': '{user} {images, plural, one {here is your image} other {here are your # images}}: {prompt}\n{summary}',
  'slack.job.cost': '{basis, select, table {{usd}} other {up to {usd} (estimate)}}',
  'slack.job.elapsed': '{time}',
  'slack.job.queued': '{ahead, plural, =0 {:hourglass_flowing_sand: Queued, next up} other {:hourglass_flowing_sand: Queued, # ahead}}',
  'slack.job.drawing': '{previews, plural, =0 {:art: Drawing…} other {:art: Drawing… preview # is in the thread}}',
  'slack.job.posting': ':outbox_tray: Made ({summary}); posting {images, plural, one {the image} other {the # images}}…',
  'slack.job.done':
    ':white_check_mark: Done · {summary} · {images, plural, one {the image is} other {# images are}} {where, select, dm {in your direct messages with me} channel {posted below} other {in the thread}}{actionsBeside, select, yes {, with Reroll, Edit and Delete} other {}}',
  'slack.job.not_posted': ':warning: The {images, plural, one {image was} other {images were}} made ({summary}) but could not be posted to Slack; press Reroll to try again.',
  'slack.job.failed': 'The job failed.',
  'slack.job.restarted': ':no_entry_sign: Stopped because the bot restarted; press Reroll to run it again.',
  'slack.job.cancelled_by': ':no_entry_sign: Cancelled by {user}',
  'slack.job.charged': ':dollar: Charged {usd}: the request had reached the image service.',
  'slack.job.may_be_charged': ':dollar: May be charged {usd}: the request had reached the image service, and its charge is not settled yet.',
  'slack.job.preview': 'Preview {preview}{images, plural, one {} other { of image {image}}}',
  'slack.job.image': 'Image {index}',
  'slack.job.kept_images': '{user} {kept}',
  'slack.job.not_in_channel': 'I cannot post in this conversation, so I did not start your job. Invite me with `/invite @Pictor` (or use me in a channel I am in) and try again.',
  'slack.job.not_posted_at_all': 'I could not post your job’s message in Slack, so I did not start it; try again in a moment.',
  'slack.job.archived': 'This conversation is archived, so I did not start your job; ask me in a channel that is still open.',
  'slack.job.maybe_posted': 'Slack did not confirm that your job’s message was posted, so I did not start the job; if the message shows up anyway, it will not run. Try again in a moment.',

  // Slack: input images refused before anything is spent.
  'slack.input.no_images': 'There is no PNG, JPEG or WebP image to edit here; attach one (or use `/imagine` to make a new image).',
  'slack.input.too_many': 'That is {count} images; an edit takes at most {max}.',
  'slack.input.too_large': '{named, select, yes {{name}} other {{what, select, image {An image} other {A file}}}} is {size}; each image must be under {max}.',
  'slack.input.wrong_type': '{named, select, yes {{name}} other {{what, select, image {An image} other {A file}}}} is {type}; I can edit PNG, JPEG and WebP images.',
  'slack.input.gone': '{named, select, yes {{name}} other {{what, select, image {An image} other {A file}}}} is no longer available in Slack.',
  'slack.input.host_not_allowed':
    '{named, select, yes {{name}} other {{what, select, image {An image} other {A file}}}} is stored on {host}, which is not one of Slack’s file hosts, so I did not download it.',
  'slack.input.download_failed':
    '{named, select, yes {{name}} other {{what, select, image {An image} other {A file}}}} could not be downloaded from Slack{reason, select, redirects { (too many redirects)} status { (status {status})} other {}}; try again.',
  'slack.input.sign_in_page': 'Slack answered with a sign-in page instead of {named, select, yes {{name}} other {the file}}: the app needs the files:read scope (reinstall it from its manifest).',
  'slack.input.not_an_image': '{named, select, yes {{name}} other {{what, select, image {An image} other {A file}}}} is not a PNG, JPEG or WebP image (checked by its content).',
  'slack.input.no_address': '{named, select, yes {{name}} other {{what, select, image {An image} other {A file}}}} has no address I can download it from.',
  'slack.input.larger_than_said': '{named, select, yes {{name}} other {{what, select, image {An image} other {A file}}}} is larger than Slack said it is; upload it again.',

  // Slack: `/imagine` and its help (flags and values are the same in every language).
  'slack.imagine.example': '{command} a lighthouse at dusk, watercolor --size 1536x1024',
  'slack.imagine.missing_prompt': 'Say what to draw, for example {example}.',
  'slack.flag.unknown': '{flag} is not a flag.{meant, select, yes { Did you mean {near}?} other {}} The flags are {flags}.',
  'slack.flag.needs_value': '{flag} needs a value: {allowed}.',
  'slack.flag.bad_value': '{given} is not allowed: {flag} takes {allowed}.',
  'slack.flag.also': '{base}; also {aliases}',
  'slack.flag.help':
    '{flag, select, size {width x height} quality {detail, time and price} background {transparent needs png or webp} format {file type} n {how many images} compression {for jpeg and webp} other {how strict the content filter is}}',
  'slack.help.flag': '• {flag} {allowed}{hasDefault, select, yes { (default {fallback})} other {}}: {help}',
  'slack.help.make': '<b>Make images:</b> {example}',
  'slack.help.flags': 'Flags go anywhere in the text:',
  'slack.help.edit':
    '<b>Edit images:</b> pick <b>Edit image</b> in the ⋯ menu of a message with images, run {command} to upload up to 10, or mention me in a message (or a thread) with images: _@Pictor make the sky purple_.',
  'slack.help.progress': 'Progress shows in the message I post, with previews in its thread; the final images are shared in the channel right after it (in the thread, when you asked in one), followed by <b>Reroll</b>, <b>Edit</b> and <b>Delete</b> buttons.',
  'slack.help.usage': '<b>What you spent:</b> {command} (today, this month, what is left of your budgets).',
  'slack.help.admins':
    '<b>Bot admins:</b> {command} (user-daily, user-monthly, workspace-daily, workspace-monthly; `clear` for the operator’s setting).',

  // Slack: the edit form and the buttons' private answers.
  'slack.edit.title': 'Edit image',
  'slack.edit.editing': 'Editing {count, plural, one {1 image} other {# images}}: {names}',
  'slack.edit.files': 'Images (up to {max})',
  'slack.edit.placeholder': 'make the sky purple',
  'slack.edit.label': '{field, select, size {Size} quality {Quality} background {Background} format {Format} other {Images}}',
  'slack.edit.out_of_date': 'This form is out of date; close it and start the edit again.',
  'slack.edit.say_what': 'Say what should change.',
  'slack.edit.default_choice': 'Your default',
  'slack.edit.pick_one': 'Pick one of {values}.',
  'slack.edit.only_images': 'Only PNG, JPEG and WebP images can be edited.',
  'slack.edit.could_not_open': 'I could not open the edit form; try again.',
  'slack.button.not_running': 'That job is no longer running.',
  'slack.button.only_requester_cancel': 'Only the person who started this job, or an admin, can cancel it.',
  'slack.button.gone_reroll': 'I no longer have the details of that job; start a new one with {command}.',
  'slack.button.gone_delete': 'I no longer have the details of that job; delete its message from Slack’s own menu.',
  'slack.button.only_requester_delete': 'Only {user} or an admin can delete this message.',
  'slack.button.only_requester_edit': 'Only {user} or an admin can use this Edit button. To edit these images yourself, use the message’s ⋯ menu → *Edit image*.',
  'slack.button.could_not_delete': 'I could not delete that message; try again.',
  'slack.button.gone_edit': 'I no longer have the images of that job; use the *Edit image* shortcut on the images instead.',
  'slack.button.other_workspace': 'That job was started in another workspace that shares this channel, and its buttons work only there; start your own with {command}.',
  'slack.mention.example': '@Pictor make the sky purple --size 1536x1024',
  'slack.mention.use_command': 'That is a command, not a picture: type it after {command}, where only you see the answer. Nothing was sent to make an image.',
  'slack.settings.not_admin': ':raised_hand: Only an admin of this workspace can see and change its settings.',
  'slack.settings.usage': 'Say {how}: SETTING is one of {names}; {show} shows them all; {repair} clears only those that cannot be read.',
  'slack.budget.usage':
    'Say {how}: CAP is user-daily, user-monthly, workspace-daily or workspace-monthly; USD is 0 or more (e.g. 2.50), or `clear` for the operator’s setting.',
  'slack.history.line':
    '{rank}. {when}{author}{channel, select, dm { in a direct message} other { in {channel}}} “{prompt}” · {n} × {size, select, default {default size} other {{size}}}, {quality, select, default {default quality} other {{quality}}} · {status, select, completed {{costKnown, select, yes {{cost}} other {completed}}} failed {failed{costKnown, select, yes { · {cost}} other {}}} other {cancelled{costKnown, select, yes { · {cost}} other {}}}}{hasLink, select, yes { · <{link}|message>} other {}}',

  // Slack: the Home tab.
  'slack.home.usage_header': 'Your spend and budgets',
  'slack.home.history_header': 'Your recent images',
  'slack.home.history_empty': 'Nothing yet: make your first image with {command} {where, select, any {in any channel} other {in {channels}}}.',
  'slack.home.thumbnail': 'The image of “{prompt}”',
  'slack.home.defaults_header': 'What you get when you choose nothing',
  'slack.home.defaults':
    'Size {size}, quality {quality}, {previews, plural, =0 {no previews} one {# preview} other {# previews}} while it draws. Here you may ask for up to {maxImages} {maxImages, plural, one {image} other {images}} a job, in quality {qualities} and size {sizes}.',
  'slack.home.admin_header': 'This workspace (admins only)',
  'slack.home.how': 'Make images with {command} {where, select, any {in any channel} other {in {channels}}}, edit them with *Edit image* in a message’s ⋯ menu, or mention me. Only you see this page.',
  'slack.home.history_none': 'Nothing yet.',
  'slack.home.only_you': 'Only you see this page.',
  'slack.home.forgetPending': 'Your Home tab may still show your prompts while it is being updated: Pictor sends it again shortly, and it is shown without them the next time you open your Home tab.',
  'slack.home.forgetNextOpen': 'Your Home tab still shows your prompts: Slack did not take its new version, and Pictor does not send it again. It is shown without them the next time you open your Home tab.',

  // Slack: the Workflow Builder step (its errors are shown as plain text).
  'slack.step.bad_inputs': 'The step needs a prompt, a channel and the person it runs for.',
  'slack.step.not_user_context': 'The step’s *For* input is not the person who used the workflow (a user context, which Slack sets and nobody can type in): this app’s manifest is out of date. Update it from Pictor’s `manifest.json`. Nothing was sent.',
  'slack.step.bad_input': 'The step’s {input, select, size {Size} quality {Quality} other {Images}} input cannot be “{given}”: it takes {allowed}.',
  'slack.step.cancelled': 'The image job was stopped before it finished.',
  'slack.step.not_posted': 'The images were made but could not be posted in the channel.',

  // House styles, role budgets and the audit channel
  'budget.role_set':
    '{scope, select, workspace {Members of the user group {role}} other {Members with the role {role}}} now have {usd} {period, select, day {a day} other {a month}} each, in place of the budget of each user; a member with several gets the most generous (operator’s cap of each user: {operatorSet, select, yes {{operator}} other {none}}).',
  'budget.role_cleared':
    '{scope, select, workspace {The user group {role}} other {The role {role}}} no longer has a {period, select, day {daily} other {monthly}} budget: its members get the budget of each user again, unless another of their {scope, select, workspace {user groups} other {roles}} has one.',
  'budget.role_budgets_restarted':
    'The budgets of {scope, select, workspace {this workspace’s user groups} other {this server’s roles}} could not be read (damaged in the bot’s storage), so this one starts a new list: every other {scope, select, workspace {user group} other {role}} now has no budget, and its members have the budget of each user. Set again each one that had a budget.',
  'budget.role_member_caps_only':
    'A {scope, select, workspace {user group’s} other {role’s}} budget is what each of its members may spend: use user-daily or user-monthly.',
  'budget.too_many_roles':
    '{scope, select, workspace {This workspace} other {This server}} already has budgets for {max} {scope, select, workspace {user groups} other {roles}}, the most; clear one first.',
  'usage.role_cap':
    '• Your {period, select, day {daily} other {monthly}} budget{setBy, select, role {, from your {scope, select, workspace {user group} other {role}} {role}} other {}}: {left} left of {limit} (spent {spent}); resets {reset}{setBy, select, unknown_roles {. Your {scope, select, workspace {user groups} other {roles}} could not be read just now, so the smallest budget that could be yours applies (that of {role}).} unreadable_budgets {. The budgets of {scope, select, workspace {this workspace’s user groups} other {this server’s roles}} could not be read, so nothing may be spent until an admin sets them again.} other {}}',
  'usage.role_budgets':
    '<b>Budgets of {scope, select, workspace {user groups} other {roles}}</b> (each member gets the most generous of theirs, in place of the budget of each user):',
  'usage.role_budgets_unreadable':
    '⚠️ <b>The budgets of {scope, select, workspace {this workspace’s user groups} other {this server’s roles}} cannot be read</b> (their record in the bot’s storage is damaged): until they are set again, no member may spend anything. Set each {scope, select, workspace {user group’s} other {role’s}} budget again ({scope, select, workspace {{command} admin budget @group user-daily …} other {/{admin} budget cap:user-daily usd:… role:@role}}); the first one set starts a new list, in which the others have none until they are set.',
  'usage.role_budget':
    '• {role}: {hasDaily, select, yes {{daily} a day} other {the budget of each user a day}} · {hasMonthly, select, yes {{monthly} a month} other {the budget of each user a month}}',
  'discord.option.role':
    'A role: its members get this budget in place of each user’s (user-daily, user-monthly)',
  'slack.budget.group_usage':
    'For a user group, say {how}: each of its members gets that budget in place of the budget of each user.',
  'slack.budget.unknown_group':
    'I cannot find the user group {group} in this workspace{missingScope, select, yes {: the app needs the usergroups:read scope (reinstall it from its manifest)} other {}}.',
  'refusal.style_unknown':
    '{count, plural, =0 {There are no house styles here yet, so “{style}” can’t be used; leave the style out, or ask an admin to define it.} other {There is no house style “{style}” here; choose one of {styles}.}}',
  'refusal.style_outside_servers': 'House styles belong to a server, and none apply outside one, so “{style}” can’t be used here; leave the style out.',
  'refusal.style_option_not_allowed': 'The house style “{style}” asks for {option} {value}, which is not allowed here; choose {option} yourself, pick another style, or ask an admin to change it.',
  'refusal.style_option_conflict': 'The house style “{style}” asks for {option} {value}, and {detail}; choose your options to go with it, pick another style, or ask an admin to change it.',
  'refusal.style_blocked_word': 'The house style “{style}” adds “{word}”, which is blocked here; choose another style, or ask an admin to change it.',
  'styles.title': '<b>House styles</b> ({count} of at most {max}); members pick one with {how}:',
  'styles.none': 'No house styles yet; admins define one with {command}.',
  'styles.line': '• {name}: “{text}”{hasOptions, select, yes { ({options})} other {}}',
  'styles.defined': 'House style {name} {replaced, select, yes {replaced} other {defined}}: “{text}”{hasOptions, select, yes { ({options})} other {}}. Members pick it with {how}.',
  'styles.removed': 'House style {name} removed; a job that names it is refused.',
  'styles.unknown': 'There is no house style {name} here.',
  'styles.option_conflict': 'House style {name} not saved: {detail}, so every job using it would be refused.',
  'styles.invalid_name': 'A style’s name is 1 to 32 lowercase letters, digits, - or _ (e.g. neon-poster); “{name}” is not one.',
  'styles.invalid_text':
    'A style’s text is at most {max} characters, with {placeholder} at most once where the member’s prompt goes (e.g. “neon-lit, {placeholder}, synthwave palette”); text without it goes after the prompt.',
  'styles.too_many': '{scope, select, workspace {This workspace} other {This server}} already has {max} house styles, the most; remove one first.',
  'styles.not_admin': 'Only an admin of {scope, select, workspace {this workspace} other {this server}} can define house styles.',
  'styles.choice': '{name}: {text}',
  'styles.more': '…and {count} more.',
  'discord.command.admin.styles': 'List this server’s house styles',
  'discord.command.admin.style': 'Define or replace a house style members can pick; text clear removes it',
  'discord.option.style': 'A house style of this server: text around your prompt, and its options',
  'discord.option.style_name': 'The style’s name (lowercase letters, digits, - or _)',
  'discord.option.style_text': 'Text around the prompt: before {placeholder} after; or clear to remove the style',
  'slack.help.style': '<b>House styles:</b> {flag} adds a style of this workspace to your prompt; {command} lists them.',
  'slack.flag.style_value': 'the name of one of this workspace’s house styles',
  'slack.flag.integer_range': 'an integer from {min} to {max}',
  'slack.flag.compression_range': 'an integer from {min} to {max}, only with {flag} {formats}',
  'slack.styles.usage':
    'Say {how}: NAME is lowercase letters, digits, - or _; TEXT goes around the prompt, {placeholder} where the prompt goes; flags set the style’s options; {clear} removes it.',
  'slack.styles.flag_not_for_style': 'A house style cannot keep {flag}: a style takes only {flags}; nothing was saved.',
  // Private results and member defaults
  'refusal.private_not_allowed':
    '{scope, select, workspace {This workspace} other {This server}} does not allow private results{fromDefault, select, yes {, and your default asks for them: ask for a public one with {platform, select, slack {--public} other {private: False}}, or turn your default off with {platform, select, slack {{command} settings --private off} other {/{imagineSettings} private: False}}} other {; ask again without {platform, select, slack {--private} other {private}}}}.',
  'refusal.private_not_allowed_form':
    '{scope, select, workspace {This workspace} other {This server}} does not allow private results{fromDefault, select, yes {, and your default asks for them: turn your default off with {platform, select, slack {{command} settings --private off} other {/{imagineSettings} private: False}}, then edit again} other {, and the edit of a private result would be private too: edit an image everyone can see instead}}.',
  'refusal.private_not_allowed_again':
    '{scope, select, workspace {This workspace} other {This server}} does not allow private results, and a private job run again by its button would be private too: ask again with {platform, select, slack {{command}} other {/{imagine}}}, without {platform, select, slack {--private} other {private}}.',
  'refusal.private_not_allowed_again_default':
    '{scope, select, workspace {This workspace} other {This server}} does not allow private results, and your default asks for them: turn your default off with {platform, select, slack {{command} settings --private off} other {/{imagineSettings} private: False}}, then press the button again.',
  'refusal.defaults_unreadable':
    '{count, plural, one {Your own default} other {Your own defaults}} {defaults} cannot be read (damaged in the bot’s storage), so no images are made for you until you set {count, plural, one {it} other {each}} again or clear {count, plural, one {it} other {them}}: {platform, select, slack {{command} settings --NAME VALUE, or {command} settings clear} other {/{imagineSettings} with a value, or /{imagineSettings} clear: all}}.',
  'refusal.settings_unreadable':
    '{count, plural, one {A rule} other {Some rules}} of {scope, select, workspace {this workspace} other {this server}} cannot be read (damaged in the bot’s storage): {settings}. No images are made here until an admin sets {count, plural, one {it} other {each}} again or clears {count, plural, one {it} other {them}}: ask an admin{platform, select, slack {; admins: {command} admin repair clears what cannot be read, or {command} admin set SETTING VALUE, or {command} admin set SETTING clear} other {; admins: /{admin} repair clears what cannot be read, or /{admin} set, with a value or clear}}.',
  'settings.hint.onOff': '{on} or {off}',
  'member.ignored':
    'Not used here, as {scope, select, workspace {this workspace’s} other {this server’s}} rules do not allow {count, plural, one {it} other {them}}: your default {defaults}.',
  'member.title': '<b>Your defaults</b> (wherever you use Pictor; one a {scope, select, workspace {workspace’s} other {server’s}} rules do not allow is not used there)',
  'member.none': 'You have set none: {scope, select, workspace {this workspace’s} dm {the bot operator’s} other {this server’s}} defaults apply.',
  'member.line': '• {name}: {value}{ignored, select, yes { — not allowed here, not used} refused { — not allowed here: a job here is refused unless you ask for a public one} unreadable {cannot be read (damaged in the bot’s storage): set it again or clear it; until then your jobs are refused} other {}}',
  'member.on_off': '{on, select, yes {on} other {off}}',
  'member.scope':
    '<b>{scope, select, workspace {This workspace} dm {Outside servers} other {This server}}</b> (when you choose nothing{scope, select, dm {; no server’s settings apply here, the bot operator’s do} other {}}): size {size}, quality {quality}, {previews, plural, =0 {no previews} one {# preview} other {# previews}}; up to {maxImages, plural, one {# image} other {# images}} a job; private results {privateResults, select, yes {allowed} other {not allowed}}.',
  'member.how': 'Change yours with {command}; {clear} clears one, or all.',
  'member.saved': 'Your defaults are saved.',
  'discord.command.settings.name': 'imagine-settings',
  'discord.command.settings.description': 'Your own defaults: size, quality, format, count, private, previews; with no option, shows them',
  'discord.option.private': 'Only you see the job and its images (if this server allows it)',
  'discord.option.default_private': 'Your jobs are shown only to you unless you ask otherwise',
  'discord.option.default_previews': 'Show previews while your images are drawn',
  'discord.option.clear': 'Clear one of your defaults, or all of them',
  'discord.choice.clear': '{name, select, all {all of them} other {{name}}}',
  'slack.job.private_in_dm': ':lock: Only you will see this job: I’m drawing it in our direct messages.',
  'slack.settings.on_off': '{flag} takes on or off.',
  'slack.help.private': '<b>Only for you:</b> {private} shows the job only to you, in our direct messages; {public} shows it in the channel when your default is private.',
  'slack.help.settings': '<b>Your defaults:</b> {command} (size, quality, format, count, private, previews).',
  'settings.hint.auditChannel': 'a channel, chosen with the audit command',
  'settings.audit_line': '• audit channel: {channel} ({source})',
  'settings.audit_off': 'off',
  'settings.audit_unreadable':
    '• audit channel: ⚠️ cannot be read (damaged in the bot’s storage) — nothing is posted until an admin chooses it again',
  'settings.audit_trouble': '⚠️ The last {failures} audit posts to {channel} failed ({code}): check that the bot can still post there, or choose another channel.',
  'audit.set': 'Audit entries of {scope, select, workspace {this workspace} other {this server}} now go to {channel}: every job and every refusal by a rule or a budget, a few at a time.',
  'audit.off': 'Audit entries are no longer posted (they went to {channel}).',
  'audit.already_off': 'No audit channel is set.',
  'audit.not_admin': 'Only an admin of {scope, select, workspace {this workspace} other {this server}} can choose its audit channel.',
  'audit.no_permission': 'I cannot post in {channel}: give the bot View Channel, Send Messages and Embed Links there, then try again. Nothing changed.',
  'audit.not_in_channel': 'I am not a member of {channel}: invite me there with {invite}, then try again. Nothing changed.',
  'audit.not_found': 'I cannot find {channel}. Nothing changed.',
  'audit.failed': 'I could not post in {channel} ({code}). Nothing changed; try again in a minute.',
  'audit.greeting': 'Audit entries for this {scope, select, workspace {workspace} other {server}} will be posted here: every job (who, where, prompt, options, cost, link) and every refusal by a rule or a budget.',
  'audit.job': '{status, select, completed {✅ Done} failed {⚠️ Failed} other {⏹️ Cancelled}} · {who} in {where}',
  'audit.refusal': '✋ Refused ({reason}) · {who} in {where}',
  'audit.details': '{kind, select, edit {Edit} other {Image}} · {n, plural, one {# image} other {# images}}{options}',
  'audit.cost': 'cost {cost}',
  'audit.failure': 'reason: {code}',
  'audit.blocked_word': 'blocked word: {word}',
  'audit.private': 'private: shown only to the member, no link',
  'audit.link': 'result: {link}',
  'audit.erased': '(erased at the member’s request)',
  'audit.skipped': '{count, plural, one {# earlier entry was} other {# earlier entries were}} not posted: more came than this channel can take.',
  'audit.summary': '{count, plural, one {# audit entry} other {# audit entries}}',
  'audit.forgotten': 'Your prompts in {count, plural, one {# audit post} other {# audit posts}} were erased too.',
  'audit.forgetPending': 'The audit channel still shows your prompt in {count, plural, one {# post} other {# posts}} that could not be edited yet: Pictor no longer keeps it and edits {count, plural, one {that post} other {those posts}} again shortly.',
  'audit.current': 'Audit entries of {scope, select, workspace {this workspace} other {this server}} go to {channel}.',
  'discord.command.admin.audit': 'Choose the channel where every job and refusal is posted; off stops it; alone, shows it',
  'discord.option.audit_channel': 'The channel for audit entries (the bot must be able to post there)',
  'discord.option.audit_off': 'Stop posting audit entries',
  'slack.admin.plain_mention':
    '{field}: Slack sent {typed} as plain text, not as a link to a {kind, select, channel {channel} other {member}}, so I can’t tell which one it is; nothing was changed. Choose it from the list Slack shows as you type, or give its ID ({id}: {kind, select, channel {at the bottom of the channel’s details} other {their profile → ⋯ → Copy member ID}}). If Slack never sends names as links, the app’s {command} command does not escape them: a workspace owner updates the app from the current manifest (<b>Escape channels, users, and links</b> on).',
  'slack.audit.usage': 'Say {set} to choose the audit channel, or {off} to stop it.',
  'slack.help.audit': '<b>Audit channel (admins):</b> {command} posts every job and every refusal by a rule or a budget there; {off} stops it.',
} as const;
