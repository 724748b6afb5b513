import type { Catalog } from '../words.js';

/** Deutsch. Du-Form, wie auf Discord und Slack üblich; Befehls-, Einstellungs- und Optionswörter bleiben englisch (sie werden so getippt). */
export const de = {
  'time.resets': '{at} (in {wait})',
  'time.days': '{days, plural, one {# Tag} other {# Tagen}}',

  'refusal.restarting': 'Der Bot startet gerade neu; versuche es in einer Minute noch einmal.',
  'refusal.scope_not_allowed':
    'Dieser Bot ist für {scope, select, workspace {diesen Workspace} other {diesen Server}} nicht freigeschaltet: Sein Betreiber hat ihn hier nicht erlaubt, daher erstellt er keine Bilder. Bitte den Betreiber des Bots, {scope, select, workspace {diesen Workspace} other {diesen Server}} hinzuzufügen.',
  'refusal.dms_not_enabled':
    'Dieser Bot erstellt Bilder nur auf den Servern, zu denen er hinzugefügt wurde: Sein Betreiber hat Direktnachrichten und Benutzerinstallationen nicht aktiviert. Nutze ihn auf einem dieser Server.',
  'refusal.member_blocked':
    'Ein Admin {scope, select, workspace {dieses Workspace} other {dieses Servers}} hat dich hier für Bilder gesperrt; frag einen von ihnen, wenn du das für einen Irrtum hältst.',
  'refusal.channel_not_allowed': 'In diesem Kanal können keine Bilder erstellt werden; nutze {channels}.',
  'refusal.member_not_allowed':
    'Die Admins {scope, select, workspace {dieses Workspace} other {dieses Servers}} haben festgelegt, wer Bilder erstellen darf, und du gehörst nicht dazu; bitte einen von ihnen um Zugang.',
  'refusal.blocked_word': 'Dein Prompt enthält „{word}“, das hier gesperrt ist; formuliere ihn um und versuche es noch einmal.',
  'refusal.too_many_images': '{limit, plural, one {Hier ist höchstens {limit} Bild} other {Hier sind höchstens {limit} Bilder}} pro Auftrag möglich; fordere weniger an.',
  'refusal.quality_not_allowed': 'Diese Qualität ist hier nicht erlaubt; wähle {allowed}.',
  'refusal.high_quality_not_allowed':
    'Die Qualität high ist einigen Mitgliedern {scope, select, workspace {dieses Workspace} other {dieses Servers}} vorbehalten; wähle eine andere Qualität oder frag einen Admin.',
  'refusal.size_not_allowed': 'Diese Größe ist hier nicht erlaubt; wähle {allowed}.',
  'refusal.moderation_not_allowed':
    'Moderation low ist hier nicht erlaubt; lass moderation weg, um die Stufe {scope, select, workspace {dieses Workspace} other {dieses Servers}} zu nutzen.',
  'refusal.user_concurrency':
    'Du hast schon {used} {used, plural, one {Auftrag} other {Aufträge}} in der Warteschlange oder in Arbeit, so viele wie gleichzeitig erlaubt ({limit}); warte, bis einer fertig ist, oder brich einen ab.',
  'refusal.user_cooldown': 'Du kannst alle {every} einen Auftrag starten; versuche es in {wait} erneut.',
  'refusal.scope_paused':
    '{scope, select, workspace {Dieser Workspace ist} dm {Deine Nutzung des Bots außerhalb von Servern ist} other {Dieser Server ist}} pausiert: In der letzten Stunde wurden {used} ausgegeben, mehr als die {limit} pro Stunde, die die übliche Nutzung erlaubt. Neue Aufträge werden erst wieder angenommen, wenn der Betreiber des Bots (der den API-Schlüssel bezahlt) sie in der Pictor-Konsole fortsetzt.',
  'refusal.budget_reached':
    '{owner, select, user {Du hast dein} scope {{scope, select, workspace {Dieser Workspace hat sein} dm {Deine Nutzung des Bots außerhalb von Servern hat ihr} other {Dieser Server hat sein}}} other {Das ganze Konto (alle Server, Workspaces und Tools mit diesem API-Schlüssel) hat sein}} {period, select, day {Tagesbudget} other {Monatsbudget}} von {limit} erreicht (ausgegeben: {used}, übrig: {left}); es wird um {reset} zurückgesetzt.',
  'refusal.budget_would_pass':
    'Dieser Auftrag könnte bis zu {estimate} kosten, mehr als die {left}, die von {owner, select, user {deinem {period, select, day {Tagesbudget} other {Monatsbudget}}} scope {{scope, select, workspace {dem {period, select, day {Tagesbudget} other {Monatsbudget}} dieses Workspace} dm {deinem {period, select, day {Tagesbudget} other {Monatsbudget}} außerhalb von Servern} other {dem {period, select, day {Tagesbudget} other {Monatsbudget}} dieses Servers}}} other {dem {period, select, day {Tagesbudget} other {Monatsbudget}} des ganzen Kontos}} von {limit} übrig sind (ausgegeben: {used}); weniger oder günstigere Bilder passen vielleicht, und das Budget wird um {reset} zurückgesetzt.',
  'refusal.other_limit': 'Dieser Auftrag wurde durch das Limit {code} abgelehnt.',
  'refusal.queue_full':
    'Der Bot ist ausgelastet: {queued} Aufträge warten, so viele, wie er auf einmal einreiht ({max}), daher wurde dieser nicht gestartet und kostet nichts; {known, select, yes {beim aktuellen Tempo würde ein neuer Auftrag etwa {wait} warten, versuche es also dann noch einmal.} other {in der letzten Minute wurde keiner gesendet, versuche es also in ein paar Minuten noch einmal.}}',
  'refusal.queue_full_images':
    'Der Bot ist ausgelastet: Die wartenden Bearbeitungen halten {held} an Bildern, und die {job} dieser würden das Maximum überschreiten, das er auf einmal hält ({max}), daher wurde sie nicht gestartet und kostet nichts; {known, select, yes {beim aktuellen Tempo würde ein neuer Auftrag etwa {wait} warten, versuche es also dann noch einmal.} other {in der letzten Minute wurde keiner gesendet, versuche es also in ein paar Minuten noch einmal.}}',
  'refusal.input_too_large':
    'Die Bilder dieser Bearbeitung umfassen {job}, mehr als dieser Bot auf einmal annimmt ({max}), daher wurde sie nicht gestartet und kostet nichts; nutze weniger oder kleinere Bilder.',

  'failure.internal_error': 'Im Bot ist etwas schiefgelaufen; versuche es noch einmal und sag dem Betreiber des Bots Bescheid, wenn es wieder passiert.',
  'failure.validation':
    '{subject, select, prompt {Der Prompt ist ungültig} image {Ein Eingabebild ist ungültig} other {Die Option {option} ist ungültig}}: {detail}{allowed, select, some { (erlaubt: {values})} other {}}.',
  'failure.moderation_blocked': 'Der Bilddienst hat diese Anfrage wegen seiner Inhaltsrichtlinie abgelehnt; ändere den Prompt (oder die Bilder) und versuche es noch einmal.',
  'failure.rate_limited': 'Der Bilddienst ist gerade ausgelastet; versuche es in {known, select, yes {etwa {wait}} other {etwa einer Minute}} noch einmal.',
  'failure.quota_exhausted': 'Das Konto beim Bilddienst hat kein Guthaben mehr; sag dem Betreiber des Bots Bescheid.',
  'failure.authentication_failed': 'Der Bilddienst hat den API-Schlüssel des Bots nicht akzeptiert; sag dem Betreiber des Bots Bescheid.',
  'failure.permission_denied': 'Der Bilddienst erlaubt dem Konto des Bots dieses Modell nicht; sag dem Betreiber des Bots Bescheid.',
  'failure.not_found': 'Der Bot ist mit einer falschen Adresse des Bilddienstes eingerichtet; sag dem Betreiber des Bots Bescheid.',
  'failure.bad_request_option': 'Der Bilddienst hat die Option {option} abgelehnt; ändere sie und versuche es noch einmal.',
  'failure.bad_request': 'Der Bilddienst hat die Anfrage abgelehnt; prüfe die Optionen und Bilder und versuche es noch einmal.',
  'failure.server_error':
    '{kind, select, stream {Der Bilddienst hat beim Erstellen der Bilder einen Fehler gemeldet} overloaded {Der Bilddienst ist überlastet und hat nach mehreren Versuchen nicht geantwortet} other {Der Bilddienst hatte einen internen Fehler und hat sich nach mehreren Versuchen nicht erholt}}; versuche es {known, select, yes {in etwa {wait}} other {in ein paar Minuten}} noch einmal.',
  'failure.api_error': 'Der Bilddienst hat mit einem unerwarteten Fehler geantwortet; versuche es in ein paar Minuten noch einmal.',
  'failure.connection_failed': 'Der Bot konnte den Bilddienst nicht erreichen; versuche es in ein paar Minuten noch einmal.',
  'failure.timeout':
    '{kind, select, idle {Der Bilddienst hat {howLong} lang nichts gesendet, daher wurde der Auftrag gestoppt.} other {Der Auftrag hat länger als {howLong} gedauert, daher wurde er gestoppt.}} Er hatte den Dienst erreicht und wurde möglicherweise berechnet (seine Schätzung zählt gegen das Budget), daher wurde er nicht erneut gesendet; Erneut versuchen startet einen neuen Auftrag, vielleicht mit niedrigerer Qualität.',
  'failure.stream_broken':
    'Die Verbindung zum Bilddienst ist abgebrochen, nachdem die Anfrage ihn erreicht hatte, bevor alle Bilder ankamen. Sie wurde möglicherweise berechnet (die Schätzung jedes fehlenden Bildes zählt gegen das Budget), daher wurde sie nicht erneut gesendet; Erneut versuchen startet einen neuen Auftrag.',
  'failure.aborted': 'Der Auftrag wurde gestoppt, bevor er fertig war; versuche es noch einmal.',
  'failure.bad_response': 'Der Bilddienst hat mit etwas geantwortet, das nicht die angeforderten Bilder sind; es wurde möglicherweise berechnet, daher wurde der Auftrag nicht erneut gesendet.',

  'job.queue_trouble': 'Die gemeinsame Warteschlange ist kurz nicht erreichbar, daher dauert es länger als sonst; dein Auftrag behält seinen Platz, und nichts wird berechnet, bevor er läuft.',
  'job.kept_images': '{count, plural, one {Das Bild, das vorher fertig wurde, ist hier; es wird berechnet.} other {Die # Bilder, die vorher fertig wurden, sind hier; sie werden berechnet.}}',

  'usage.your_spend': '<b>Deine Ausgaben</b> (UTC): heute {today} · diesen Monat {month}',
  'usage.no_budget': 'Für dich gilt kein Budget: Der Betreiber des Bots hat keines festgelegt.',
  'usage.budgets': '<b>Budgets</b>',
  'usage.cap':
    '• {whose, select, user {Dein {period, select, day {Tagesbudget} other {Monatsbudget}}} account {Das {period, select, day {Tagesbudget} other {Monatsbudget}} des ganzen Kontos} other {{scope, select, dm {Dein {period, select, day {Tagesbudget} other {Monatsbudget}} außerhalb von Servern} workspace {Das {period, select, day {Tagesbudget} other {Monatsbudget}} dieses Workspace} other {Das {period, select, day {Tagesbudget} other {Monatsbudget}} dieses Servers}}}}{setBy, select, chat { (von einem Admin festgelegt)} other {}}: {left} von {limit} übrig (ausgegeben: {spent}); wird zurückgesetzt: {reset}',
  'usage.scope_spend': '<b>{scope, select, workspace {Dieser Workspace} other {Dieser Server}}</b> (UTC): heute {today} · diesen Monat {month}',
  'usage.no_jobs_yet': 'Diesen Monat noch keine abgeschlossenen Aufträge.',
  'usage.top_users': 'Top-Nutzer diesen Monat:',
  'usage.top_user': '{rank}. {user} {usd} ({jobs} {jobs, plural, one {Auftrag} other {Aufträge}})',

  'budget.amount_hint': 'Gib das Budget in US-Dollar an, 0 oder mehr (z. B. 2.50), oder clear, um zur Einstellung des Betreibers zurückzukehren.',
  'budget.not_admin': 'Nur ein Admin {scope, select, workspace {dieses Workspace} other {dieses Servers}} kann seine Budgets ändern.',
  'budget.above_operator_cap':
    'Der Betreiber des Bots begrenzt {whose, select, user {das {period, select, day {Tagesbudget} other {Monatsbudget}} jedes Nutzers} other {das {period, select, day {Tagesbudget} other {Monatsbudget}} {scope, select, workspace {dieses Workspace} other {dieses Servers}}}} auf {operator} ({variable}); ein Admin kann es niedriger setzen, nicht höher. Bitte den Betreiber, es anzuheben.',
  'budget.cleared':
    '{whose, select, user {Das {period, select, day {Tagesbudget} other {Monatsbudget}} jedes Nutzers} other {Das {period, select, day {Tagesbudget} other {Monatsbudget}} {scope, select, workspace {dieses Workspace} other {dieses Servers}}}} folgt wieder der Einstellung des Betreibers ({operatorSet, select, yes {{operator}} other {kein Limit}}).',
  'budget.set':
    '{whose, select, user {Das {period, select, day {Tagesbudget} other {Monatsbudget}} jedes Nutzers} other {Das {period, select, day {Tagesbudget} other {Monatsbudget}} {scope, select, workspace {dieses Workspace} other {dieses Servers}}}} beträgt jetzt {usd} für {scope, select, workspace {diesen Workspace} other {diesen Server}} (Grenze des Betreibers: {operatorSet, select, yes {{operator}} other {keine}}).',

  'settings.not_admin': 'Nur ein Admin {scope, select, workspace {dieses Workspace} other {dieses Servers}} kann seine Einstellungen ändern.',
  'settings.unknown': 'Wähle eine von {names}.',
  'settings.takes': '{setting} erwartet {hint}.',
  'settings.changed': '{setting} ist jetzt {value} (vorher {wasDefault, select, yes {der Standard} other {{was}}}).',
  'settings.cleared': '{setting} ist wieder auf dem Standard (vorher {wasDefault, select, yes {der Standard} other {{was}}}).',
  'settings.at_most': 'höchstens {max}',
  'settings.beyond_operator': 'Der Betreiber des Bots erlaubt {allowed} für {setting}; ein Admin kann innerhalb davon wählen, nicht darüber hinaus. Bitte den Betreiber, es zu ändern.',
  'settings.title':
    'Einstellungen {scope, select, workspace {dieses Workspace} other {dieses Servers}} — woher jede stammt: Betreiber (die Umgebung des Bots), Admin (hier festgelegt), Standard.',
  'settings.allowed_here':
    '• Bot hier erlaubt: {allowed, select, yes {ja} other {nein — der Betreiber hat {scope, select, workspace {diesen Workspace} other {diesen Server}} nicht erlaubt, daher wird jeder Auftrag abgelehnt}} (Betreiber)',
  'settings.line': '• {setting}: {value} ({source})',
  'settings.operator_words': '• vom Betreiber gesperrte Wörter (überall): {words} (Betreiber)',
  'settings.source': '{source, select, operator {Betreiber} admin {Admin} other {Standard}}',
  'settings.source_admin': 'Admin: {who}, {when}',
  'settings.how_to_change': 'Ändere eine mit {command} (clear für den Standard; add oder remove für Listen).',
  'settings.empty.channels': 'jeder Kanal',
  'settings.empty.allowed': 'alle',
  'settings.empty.blocked': 'niemand',
  'settings.empty.none': 'keine',
  'settings.empty.highQualityFor': 'wer sie nutzen darf',
  'settings.hint.channels': 'Kanal-Erwähnungen (#art #memes); clear für jeden Kanal',
  'settings.hint.allowed': 'Nutzer- oder Rollen-Erwähnungen (@artists @sam); clear für alle',
  'settings.hint.blocked': 'Nutzer-Erwähnungen (@sam)',
  'settings.hint.blockedWords': 'Wörter oder Wendungen, durch Kommas getrennt (gore, red fox)',
  'settings.hint.highQualityFor': 'Nutzer- oder Rollen-Erwähnungen, die Qualität high nutzen dürfen; clear für alle, die sie nutzen dürfen',
  'settings.hint.someOf': 'eines oder mehrere von {values}',
  'settings.hint.oneOf': 'eines von {values}',
  'settings.hint.moderation': '{low} oder {auto}',
  'settings.hint.number': 'eine ganze Zahl von {min} bis {max}',

  'button.cancel': 'Abbrechen',
  'button.retry': 'Erneut versuchen',
  'button.reroll': 'Neu erstellen',
  'button.delete': 'Löschen',
  'button.edit': 'Bearbeiten',
  'button.edit_image': '{images, plural, one {Bearbeiten} other {Bearbeiten {index}}}',

  'discord.job.getting_ready': '⏳ Wird vorbereitet…',
  'discord.job.queued': '{ahead, plural, =0 {⏳ Als Nächstes dran…} one {⏳ In der Warteschlange: # Auftrag vor deinem.} other {⏳ In der Warteschlange: # Aufträge vor deinem.}}',
  'discord.job.drawing': '🎨 {n, plural, one {{kind, select, edit {Die Bearbeitung wird erstellt} other {Das Bild wird gezeichnet}}} other {# Bilder werden gezeichnet}}…',
  'discord.job.preview': '🎨 Wird gezeichnet… Vorschau {preview}{n, plural, one {} other { (Bild {image} von {n})}}',
  'discord.job.cost': '{basis, select, table {{usd}} other {bis zu {usd} (geschätzt)}}',
  'discord.job.elapsed': '{time}',
  'discord.job.restarted_before_done': '🔌 Der Bot wurde neu gestartet, bevor das fertig war; drücke Erneut versuchen, um es noch einmal auszuführen.',
  'discord.job.cancelled_by': '✖️ Abgebrochen von {user}.',
  'discord.job.interrupted': '🔌 Dieser Auftrag wurde beim Neustart des Bots gestoppt; drücke Erneut versuchen, um ihn noch einmal auszuführen.',
  'discord.job.too_large_to_upload': '{images, plural, one {Das Bild} other {Bild {index}}} ist zu groß, um es hier hochzuladen (Limit {limit} pro Datei), auch neu kodiert.',
  'discord.job.reencoded':
    '{images, plural, one {Das Bild} other {Bild {index}}} wurde als {format} neu kodiert{shrunk, select, yes { und auf {percent} % verkleinert} other {}}, um in das Upload-Limit dieses Servers von {limit} pro Datei zu passen.',
  'discord.job.more_images': 'Weitere Bilder ({from}–{to} von {of})',
  'discord.job.upload_separately': 'Die Bilder waren zu groß, um sie hier zusammen hochzuladen; sie folgen in einzelnen Nachrichten.',

  'history.none_kept': '{icon} Dieser Bot speichert keinen Verlauf.',
  'history.erased': '{icon} Dein Verlauf wurde gelöscht ({count} {count, plural, one {Auftrag} other {Aufträge}}). Bereits gepostete Bilder bleiben in ihren Kanälen.',
  'history.not_admin': '{icon} Nur ein Admin {scope, select, workspace {dieses Workspace} other {dieses Servers}} kann seinen Verlauf sehen.',
  'history.title': '{whose, select, scope {<b>Neueste Bilder {scope, select, workspace {dieses Workspace} other {dieses Servers}}</b>} other {<b>Deine letzten Bilder</b> (nur du siehst das)}}',
  'history.empty': 'Noch nichts.',
  'history.reroll_numbered': 'Neu erstellen {index}',
  'discord.history.line':
    '{rank}. {when}{author} „{prompt}“ · {n} × {size, select, default {Standardgröße} other {{size}}}, {quality, select, default {Standardqualität} other {{quality}}} · {costKnown, select, yes {{cost}} other {{status, select, completed {abgeschlossen} failed {fehlgeschlagen} other {abgebrochen}}}}{hasLink, select, yes { · [Nachricht]({link})} other {}}',

  'discord.settings.not_admin': '✋ Nur ein Admin dieses Servers kann seine Einstellungen sehen und ändern.',
  'discord.unknown_interaction': 'Diesen Befehl oder Button kenne ich nicht (vielleicht stammt er von einer älteren Version von mir).',
  'discord.button.too_old': 'Dieser Auftrag ist zu alt: Ich habe nicht mehr, was er braucht. Starte einen neuen mit /imagine oder /edit.',
  'discord.button.unknown': 'Dieser Button macht nichts mehr.',
  'discord.button.finished': 'Dieser Auftrag ist schon fertig.',
  'discord.button.too_late_to_cancel': 'Dieser Auftrag ist gleich fertig und kann nicht mehr abgebrochen werden.',
  'discord.button.only_requester': 'Nur {user} oder ein Admin kann {action, select, delete {diese Nachricht löschen} other {diesen Auftrag abbrechen}}.',
  'discord.button.runs_elsewhere': 'Dieser Auftrag wird von einer anderen Instanz des Bots gezeichnet, die nicht erreichbar war: Sie zeigt das Ergebnis, wenn er fertig ist.',
  'discord.edit.title_result': '{images, plural, one {Bild bearbeiten} other {Bild {index} bearbeiten}}',
  'discord.edit.title_message': '{images, plural, one {Bild bearbeiten} other {# Bilder bearbeiten}}',
  'discord.edit.form_expired': 'Dieses Bearbeitungsformular ist zu alt: Ich habe seine Bilder nicht mehr. Nutze „Bild bearbeiten“ noch einmal an der Nachricht.',
  'discord.edit.image_gone': 'Dieses Bild wird nicht mehr aufbewahrt; bearbeite ein neueres oder nutze /edit mit der Datei.',
  'discord.edit.placeholder': 'z. B. mach es Nacht, mit Vollmond',
  'discord.edit.message_image': '{images, plural, one {das Bild dieser Nachricht} other {Bild {index} dieser Nachricht}}',
  'discord.edit.message_has_no_images': 'Diese Nachricht hat keine Bilder zum Bearbeiten (PNG-, JPEG- oder WebP-Anhänge).',
  'discord.edit.message_has_too_many': 'Eine Bearbeitung nimmt höchstens {max} Bilder, und diese Nachricht hat {count}.',
  'discord.edit.message_links_elsewhere': 'Ich bearbeite nur Bilder, die auf Discord hochgeladen sind, und diese Nachricht verlinkt Bilder anderswo.',
  'discord.input.no_images': 'Es gibt kein Bild zum Bearbeiten: Hänge ein PNG-, JPEG- oder WebP-Bild an.',
  'discord.input.too_many': 'Eine Bearbeitung nimmt höchstens {max} Bilder, und es sind {count}.',
  'discord.input.host_not_allowed': 'Ich lade nur Bilder herunter, die auf Discord hochgeladen sind, und {label} liegt nicht dort; lade die Datei selbst hoch.',
  'discord.input.too_large': '{label} ({file}) ist {size} groß; jedes Bild muss kleiner als {max} sein.',
  'discord.input.too_large_read': '{label} ({file}) ist zu groß; {why, select, limit {jedes Bild muss kleiner als {max} sein} other {es ist größer, als Discord angegeben hat; hänge es noch einmal an}}.',
  'discord.input.download_failed': 'Ich konnte {label} ({file}) nicht von Discord herunterladen; der Link ist vielleicht abgelaufen, hänge es also noch einmal an.',
  'discord.input.not_an_image': '{label} ({file}) ist kein PNG-, JPEG- oder WebP-Bild.',

  'edit.what_should_change': 'Was soll sich ändern?',
  'error.on_my_side': 'Bei mir ist etwas schiefgelaufen; versuche es gleich noch einmal.',

  'discord.command.imagine.name': 'bild',
  'discord.command.imagine.description': 'Bilder aus einer Textbeschreibung zeichnen',
  'discord.command.edit.name': 'bearbeiten',
  'discord.command.edit.description': 'Bilder mit einer Textbeschreibung bearbeiten oder kombinieren',
  'discord.command.edit_image.name': 'Bild bearbeiten',
  'discord.command.usage.name': 'bild-verbrauch',
  'discord.command.usage.description': 'Was du heute und diesen Monat ausgegeben hast und was von deinen Budgets übrig ist',
  'discord.command.history.name': 'bild-verlauf',
  'discord.command.history.description': 'Deine letzten 10 Bilder, privat; Admins sehen die des Servers; forget löscht deine',
  'discord.command.admin.name': 'bild-admin',
  'discord.command.admin.description': 'Server-Admins: Bildbudgets und Regeln dieses Servers ändern',
  'discord.command.admin.budget': 'Budget dieses Servers setzen, bis zur Grenze des Betreibers; clear kehrt zu ihr zurück',
  'discord.command.admin.settings': 'Jede Einstellung dieses Servers zeigen und woher sie stammt (Betreiber oder Admin)',
  'discord.command.admin.set': 'Eine Einstellung dieses Servers ändern, im Rahmen dessen, was der Betreiber erlaubt',
  'discord.option.prompt_imagine': 'Was gezeichnet werden soll',
  'discord.option.prompt_edit': 'Was sich ändern soll',
  'discord.option.image': '{first, select, yes {Das zu bearbeitende Bild (PNG, JPEG oder WebP)} other {Ein weiteres Bild (PNG, JPEG oder WebP)}}',
  'discord.option.size': 'Breite x Höhe des Ergebnisses',
  'discord.option.quality': 'Höhere Qualität kostet mehr und dauert länger',
  'discord.option.background': 'transparent braucht das Format {formats}',
  'discord.option.format': 'Dateiformat des Ergebnisses',
  'discord.option.count': 'Wie viele Bilder',
  'discord.option.show': 'Wessen Verlauf (Standard: deiner)',
  'discord.option.cap': 'Welches Budget',
  'discord.option.usd': 'US-Dollar, 0 oder mehr (z. B. 2.50), oder clear für die Einstellung des Betreibers',
  'discord.option.setting': 'Welche Einstellung',
  'discord.option.value': '#Kanäle, @Rollen/@Mitglieder, Wörter, eine Zahl…; clear für den Standard; add …/remove … für Listen',
  'discord.choice.size': '{size} {shape, select, square {quadratisch} landscape {Querformat} other {Hochformat}}{isDefault, select, yes { (Standard)} other {}}',
  'discord.choice.quality': '{quality, select, auto {auto (der Dienst wählt)} other {{quality}}}{isDefault, select, yes { (Standard)} other {}}',
  'discord.choice.background': '{background, select, transparent {transparent (braucht das Format {formats})} other {{background}}}{isDefault, select, yes { (Standard)} other {}}',
  'discord.choice.format': '{transparent, select, yes {{format}} other {{format} (ohne Transparenz)}}{isDefault, select, yes { (Standard)} other {}}',
  'discord.choice.show': '{show, select, mine {meiner} server {Server (Admins)} other {meinen löschen}}',

  'button.try_again': 'Erneut versuchen',
  'slack.job.header': '{user} {kind, select, edit {möchte {inputs, plural, one {ein Bild} other {# Bilder}} bearbeiten} other {wünscht sich}}: {prompt}',
  'slack.job.text': 'Pictor: {status}',
  'slack.job.plain_status':
    '{stage, select, queued {{ahead, plural, =0 {in der Warteschlange} other {in der Warteschlange, # davor}}} running {wird gezeichnet…} posting {erstellt ({summary}), die Bilder werden gepostet} done {fertig ({summary})} not_posted {erstellt, aber die Bilder konnten nicht gepostet werden} failed {fehlgeschlagen: {failure}} other {abgebrochen}}',
  'slack.job.actions_text': 'Neu erstellen, Bearbeiten oder Löschen: {prompt}',
  'slack.job.finished_where':
    '{where, select, posting {Dieser Auftrag ist fertig: Seine Bilder werden gerade gepostet, direkt danach kommen Neu erstellen, Bearbeiten und Löschen.} dm {Dieser Auftrag ist fertig: Seine Bilder und ihre Buttons Neu erstellen, Bearbeiten und Löschen wurden per Direktnachricht an die Person geschickt, die ihn angefordert hat.} link {Dieser Auftrag ist fertig: Seine Bilder und ihre Buttons Neu erstellen, Bearbeiten und Löschen sind <{link}|hier>.} other {Dieser Auftrag ist fertig: Seine Bilder sind nach seiner Nachricht gepostet, mit ihren Buttons Neu erstellen, Bearbeiten und Löschen.}}',
  'slack.job.caption': '{user} {images, plural, one {hier ist dein Bild} other {hier sind deine # Bilder}}: {prompt}\n{summary}',
  'slack.job.cost': '{basis, select, table {{usd}} other {bis zu {usd} (geschätzt)}}',
  'slack.job.elapsed': '{time}',
  'slack.job.queued': '{ahead, plural, =0 {:hourglass_flowing_sand: In der Warteschlange, als Nächstes dran} other {:hourglass_flowing_sand: In der Warteschlange, # davor}}',
  'slack.job.drawing': '{previews, plural, =0 {:art: Wird gezeichnet…} other {:art: Wird gezeichnet… Vorschau # ist im Thread}}',
  'slack.job.posting': ':outbox_tray: Erstellt ({summary}); {images, plural, one {das Bild wird} other {die # Bilder werden}} gepostet…',
  'slack.job.done':
    ':white_check_mark: Fertig · {summary} · {images, plural, one {das Bild ist} other {# Bilder sind}} {where, select, dm {in deinen Direktnachrichten mit mir} channel {unten gepostet} other {im Thread}}{actionsBeside, select, yes {, mit Neu erstellen, Bearbeiten und Löschen} other {}}',
  'slack.job.not_posted': ':warning: {images, plural, one {Das Bild wurde} other {Die Bilder wurden}} erstellt ({summary}), konnten aber nicht in Slack gepostet werden; drücke Neu erstellen, um es noch einmal zu versuchen.',
  'slack.job.failed': 'Der Auftrag ist fehlgeschlagen.',
  'slack.job.restarted': ':no_entry_sign: Gestoppt, weil der Bot neu gestartet wurde; drücke Neu erstellen, um ihn noch einmal auszuführen.',
  'slack.job.cancelled_by': ':no_entry_sign: Abgebrochen von {user}',
  'slack.job.preview': 'Vorschau {preview}{images, plural, one {} other { von Bild {image}}}',
  'slack.job.image': 'Bild {index}',
  'slack.job.kept_images': '{user} {kept}',
  'slack.job.not_in_channel': 'Ich kann in dieser Unterhaltung nicht posten, daher habe ich deinen Auftrag nicht gestartet. Lade mich mit `/invite @Pictor` ein (oder nutze mich in einem Kanal, in dem ich bin) und versuche es noch einmal.',
  'slack.job.not_posted_at_all': 'Ich konnte die Nachricht deines Auftrags nicht in Slack posten, daher habe ich ihn nicht gestartet; versuche es gleich noch einmal.',

  'slack.input.no_images': 'Hier gibt es kein PNG-, JPEG- oder WebP-Bild zum Bearbeiten; hänge eines an (oder nutze `/imagine` für ein neues Bild).',
  'slack.input.too_many': 'Das sind {count} Bilder; eine Bearbeitung nimmt höchstens {max}.',
  'slack.input.too_large': '{named, select, yes {{name}} other {{what, select, image {Ein Bild} other {Eine Datei}}}} ist {size} groß; jedes Bild muss kleiner als {max} sein.',
  'slack.input.wrong_type': '{named, select, yes {{name}} other {{what, select, image {Ein Bild} other {Eine Datei}}}} ist {type}; ich kann PNG-, JPEG- und WebP-Bilder bearbeiten.',
  'slack.input.gone': '{named, select, yes {{name}} other {{what, select, image {Ein Bild} other {Eine Datei}}}} ist in Slack nicht mehr verfügbar.',
  'slack.input.host_not_allowed':
    '{named, select, yes {{name}} other {{what, select, image {Ein Bild} other {Eine Datei}}}} liegt auf {host}, keinem der Datei-Hosts von Slack, daher habe ich es nicht heruntergeladen.',
  'slack.input.download_failed':
    '{named, select, yes {{name}} other {{what, select, image {Ein Bild} other {Eine Datei}}}} konnte nicht von Slack heruntergeladen werden{reason, select, redirects { (zu viele Weiterleitungen)} status { (Status {status})} other {}}; versuche es noch einmal.',
  'slack.input.sign_in_page': 'Slack hat statt {named, select, yes {{name}} other {der Datei}} eine Anmeldeseite geliefert: Die App braucht den Scope files:read (installiere sie neu aus ihrem Manifest).',
  'slack.input.not_an_image': '{named, select, yes {{name}} other {{what, select, image {Ein Bild} other {Eine Datei}}}} ist kein PNG-, JPEG- oder WebP-Bild (am Inhalt geprüft).',
  'slack.input.no_address': '{named, select, yes {{name}} other {{what, select, image {Ein Bild} other {Eine Datei}}}} hat keine Adresse, von der ich es herunterladen kann.',
  'slack.input.larger_than_said': '{named, select, yes {{name}} other {{what, select, image {Ein Bild} other {Eine Datei}}}} ist größer, als Slack angegeben hat; lade es noch einmal hoch.',

  'slack.imagine.example': '{command} ein Leuchtturm in der Dämmerung, Aquarell --size 1536x1024',
  'slack.imagine.missing_prompt': 'Sag, was gezeichnet werden soll, zum Beispiel {example}.',
  'slack.flag.unknown': '{flag} ist kein Flag.{meant, select, yes { Meintest du {near}?} other {}} Die Flags sind {flags}.',
  'slack.flag.needs_value': '{flag} braucht einen Wert: {allowed}.',
  'slack.flag.bad_value': '{given} ist nicht erlaubt: {flag} nimmt {allowed}.',
  'slack.flag.also': '{base}; außerdem {aliases}',
  'slack.flag.help':
    '{flag, select, size {Breite x Höhe} quality {Detail, Zeit und Preis} background {transparent braucht png oder webp} format {Dateityp} n {wie viele Bilder} compression {für jpeg und webp} other {wie streng der Inhaltsfilter ist}}',
  'slack.help.flag': '• {flag} {allowed}{hasDefault, select, yes { (Standard {fallback})} other {}}: {help}',
  'slack.help.make': '<b>Bilder erstellen:</b> {example}',
  'slack.help.flags': 'Flags können überall im Text stehen:',
  'slack.help.edit':
    '<b>Bilder bearbeiten:</b> Wähle <b>Edit image</b> im ⋯-Menü einer Nachricht mit Bildern, nutze {command}, um bis zu 10 hochzuladen, oder erwähne mich in einer Nachricht (oder einem Thread) mit Bildern: _@Pictor mach den Himmel lila_.',
  'slack.help.progress': 'Der Fortschritt erscheint in der Nachricht, die ich poste; die Bilder landen in ihrem Thread, mit den Buttons <b>Neu erstellen</b> und <b>Bearbeiten</b>.',
  'slack.help.usage': '<b>Was du ausgegeben hast:</b> {command} (heute, diesen Monat, was von deinen Budgets übrig ist).',
  'slack.help.admins': '<b>Bot-Admins:</b> {command} (user-daily, user-monthly, workspace-daily, workspace-monthly; `clear` für die Einstellung des Betreibers).',

  'slack.edit.title': 'Bild bearbeiten',
  'slack.edit.editing': 'Bearbeitet {count, plural, one {1 Bild} other {# Bilder}}: {names}',
  'slack.edit.files': 'Bilder (bis zu {max})',
  'slack.edit.placeholder': 'mach den Himmel lila',
  'slack.edit.label': '{field, select, size {Größe} quality {Qualität} background {Hintergrund} format {Format} other {Bilder}}',
  'slack.edit.out_of_date': 'Dieses Formular ist veraltet; schließe es und beginne die Bearbeitung noch einmal.',
  'slack.edit.say_what': 'Sag, was sich ändern soll.',
  'slack.edit.pick_one': 'Wähle eines von {values}.',
  'slack.edit.only_images': 'Nur PNG-, JPEG- und WebP-Bilder können bearbeitet werden.',
  'slack.edit.could_not_open': 'Ich konnte das Bearbeitungsformular nicht öffnen; versuche es noch einmal.',
  'slack.button.not_running': 'Dieser Auftrag läuft nicht mehr.',
  'slack.button.only_requester_cancel': 'Nur die Person, die diesen Auftrag gestartet hat, oder ein Admin kann ihn abbrechen.',
  'slack.button.gone_reroll': 'Ich habe die Details dieses Auftrags nicht mehr; starte einen neuen mit {command}.',
  'slack.button.gone_delete': 'Ich habe die Details dieses Auftrags nicht mehr; lösche seine Nachricht über das Menü von Slack.',
  'slack.button.only_requester_delete': 'Nur {user} oder ein Admin kann diese Nachricht löschen.',
  'slack.button.could_not_delete': 'Ich konnte diese Nachricht nicht löschen; versuche es noch einmal.',
  'slack.button.gone_edit': 'Ich habe die Bilder dieses Auftrags nicht mehr; nutze stattdessen die Verknüpfung *Edit image* an den Bildern.',
  'slack.mention.example': '@Pictor mach den Himmel lila --size 1536x1024',
  'slack.settings.not_admin': ':raised_hand: Nur ein Admin dieses Workspace kann seine Einstellungen sehen und ändern.',
  'slack.settings.usage': 'Sag {how}: SETTING ist eines von {names}; {show} zeigt sie alle.',
  'slack.budget.usage':
    'Sag {how}: CAP ist user-daily, user-monthly, workspace-daily oder workspace-monthly; USD ist 0 oder mehr (z. B. 2.50), oder `clear` für die Einstellung des Betreibers.',
  'slack.history.line':
    '{rank}. {when}{author} in {channel} „{prompt}“ · {n} × {size, select, default {Standardgröße} other {{size}}}, {quality, select, default {Standardqualität} other {{quality}}} · {costKnown, select, yes {{cost}} other {{status, select, completed {abgeschlossen} failed {fehlgeschlagen} other {abgebrochen}}}}{hasLink, select, yes { · <{link}|Nachricht>} other {}}',
  'slack.home.usage_header': 'Deine Ausgaben und Budgets',
  'slack.home.history_header': 'Deine letzten Bilder',
  'slack.home.history_empty': 'Noch nichts: Erstelle dein erstes Bild mit {command} in einem beliebigen Kanal.',
  'slack.home.thumbnail': 'Das Bild zu „{prompt}“',
  'slack.home.defaults_header': 'Was du bekommst, wenn du nichts wählst',
  'slack.home.defaults':
    'Größe {size}, Qualität {quality}, {previews, plural, =0 {keine Vorschau} one {# Vorschau} other {# Vorschauen}} während des Zeichnens. Hier kannst du bis zu {maxImages} {maxImages, plural, one {Bild} other {Bilder}} pro Auftrag anfordern, in Qualität {qualities} und Größe {sizes}.',
  'slack.home.admin_header': 'Dieser Workspace (nur für Admins)',
  'slack.home.how': 'Erstelle Bilder mit {command} in einem beliebigen Kanal, bearbeite sie mit *Edit image* im ⋯-Menü einer Nachricht, oder erwähne mich. Nur du siehst diese Seite.',
  'slack.step.bad_inputs': 'Der Schritt braucht einen Prompt, einen Kanal und die Person, für die er läuft; Größe, Qualität und Anzahl müssen Werte sein, die Pictor annimmt.',
  'slack.step.cancelled': 'Der Bildauftrag wurde gestoppt, bevor er fertig war.',
  'slack.step.not_posted': 'Die Bilder wurden erstellt, konnten aber nicht im Kanal gepostet werden.',

  // House styles, role budgets and the audit channel
  'budget.role_set':
    '{scope, select, workspace {Mitglieder der Benutzergruppe {role}} other {Mitglieder mit der Rolle {role}}} haben jetzt je {usd} {period, select, day {pro Tag} other {pro Monat}} statt des Budgets jedes Nutzers; wer mehrere hat, bekommt das großzügigste (Grenze des Betreibers pro Nutzer: {operatorSet, select, yes {{operator}} other {keine}}).',
  'budget.role_cleared':
    '{scope, select, workspace {Die Benutzergruppe {role}} other {Die Rolle {role}}} hat kein {period, select, day {Tagesbudget} other {Monatsbudget}} mehr: Ihre Mitglieder bekommen wieder das Budget jedes Nutzers, sofern nicht eine andere ihrer {scope, select, workspace {Benutzergruppen} other {Rollen}} eines hat.',
  'budget.role_member_caps_only':
    'Das Budget einer {scope, select, workspace {Benutzergruppe} other {Rolle}} ist, was jedes ihrer Mitglieder ausgeben darf: nimm user-daily oder user-monthly.',
  'budget.too_many_roles':
    '{scope, select, workspace {Dieser Workspace} other {Dieser Server}} hat schon Budgets für {max} {scope, select, workspace {Benutzergruppen} other {Rollen}}, das Maximum; lösche zuerst eines.',
  'usage.role_cap':
    '• Dein {period, select, day {Tagesbudget} other {Monatsbudget}}{setBy, select, role {, von deiner {scope, select, workspace {Benutzergruppe} other {Rolle}} {role}} other {}}: {left} von {limit} übrig ({spent} ausgegeben); wird zurückgesetzt: {reset}{setBy, select, unknown_roles {. Deine {scope, select, workspace {Benutzergruppen} other {Rollen}} ließen sich gerade nicht lesen, daher gilt das kleinste Budget, das deines sein könnte (das von {role}).} other {}}',
  'usage.role_budgets':
    '<b>Budgets der {scope, select, workspace {Benutzergruppen} other {Rollen}}</b> (jedes Mitglied bekommt das großzügigste seiner eigenen statt des Budgets jedes Nutzers):',
  'usage.role_budget':
    '• {role}: {hasDaily, select, yes {{daily} pro Tag} other {das Budget jedes Nutzers pro Tag}} · {hasMonthly, select, yes {{monthly} pro Monat} other {das Budget jedes Nutzers pro Monat}}',
  'discord.option.role':
    'Eine Rolle: ihre Mitglieder bekommen dieses Budget statt dem jedes Nutzers (user-daily/-monthly)',
  'slack.budget.group_usage':
    'Für eine Benutzergruppe sag {how}: jedes ihrer Mitglieder bekommt dieses Budget statt des Budgets jedes Nutzers.',
  'slack.budget.unknown_group':
    'Ich finde die Benutzergruppe {group} in diesem Workspace nicht{missingScope, select, yes {: die App braucht den Scope usergroups:read (installiere sie aus ihrem Manifest neu)} other {}}.',
  'refusal.style_unknown':
    '{count, plural, =0 {Hier gibt es noch keine Hausstile, daher kann „{style}“ nicht verwendet werden; lass den Stil weg oder bitte einen Admin, ihn anzulegen.} other {Hier gibt es keinen Hausstil „{style}“; wähle einen von {styles}.}}',
  'refusal.style_option_not_allowed': 'Der Hausstil „{style}“ verlangt {option} {value}, was hier nicht erlaubt ist; wähle {option} selbst, nimm einen anderen Stil oder bitte einen Admin, ihn zu ändern.',
  'refusal.style_blocked_word': 'Der Hausstil „{style}“ fügt „{word}“ hinzu, das hier gesperrt ist; wähle einen anderen Stil oder bitte einen Admin, ihn zu ändern.',
  'styles.title': '<b>Hausstile</b> ({count} von höchstens {max}); Mitglieder wählen einen mit {how}:',
  'styles.none': 'Noch keine Hausstile; Admins legen einen mit {command} an.',
  'styles.line': '• {name}: „{text}“{hasOptions, select, yes { ({options})} other {}}',
  'styles.defined': 'Hausstil {name} {replaced, select, yes {ersetzt} other {angelegt}}: „{text}“{hasOptions, select, yes { ({options})} other {}}. Mitglieder wählen ihn mit {how}.',
  'styles.removed': 'Hausstil {name} entfernt; ein Auftrag, der ihn nennt, wird abgelehnt.',
  'styles.unknown': 'Hier gibt es keinen Hausstil {name}.',
  'styles.invalid_name': 'Der Name eines Stils besteht aus 1 bis 32 Kleinbuchstaben, Ziffern, - oder _ (z. B. neon-poster); „{name}“ ist keiner.',
  'styles.invalid_text':
    'Der Text eines Stils hat höchstens {max} Zeichen, mit {placeholder} höchstens einmal dort, wo der Prompt des Mitglieds steht (z. B. „neon-lit, {placeholder}, synthwave palette“); Text ohne es kommt hinter den Prompt.',
  'styles.too_many': '{scope, select, workspace {Dieser Workspace} other {Dieser Server}} hat schon {max} Hausstile, das Maximum; entferne zuerst einen.',
  'styles.not_admin': 'Nur ein Admin {scope, select, workspace {dieses Workspaces} other {dieses Servers}} kann Hausstile anlegen.',
  'styles.choice': '{name}: {text}',
  'styles.more': '… und {count} weitere.',
  'discord.command.admin.styles': 'Die Hausstile dieses Servers auflisten',
  'discord.command.admin.style': 'Einen Hausstil anlegen oder ersetzen; text clear entfernt ihn',
  'discord.option.style': 'Ein Hausstil dieses Servers: Text um deinen Prompt und seine Optionen',
  'discord.option.style_name': 'Der Name des Stils (Kleinbuchstaben, Ziffern, - oder _)',
  'discord.option.style_text': 'Text um den Prompt: vorher {placeholder} nachher; oder clear, um den Stil zu entfernen',
  'slack.help.style': '<b>Hausstile:</b> {flag} fügt deinem Prompt einen Stil dieses Workspaces hinzu; {command} listet sie auf.',
  'slack.flag.style_value': 'der Name eines Hausstils dieses Workspaces',
  'slack.styles.usage':
    'Schreibe {how}: NAME besteht aus Kleinbuchstaben, Ziffern, - oder _; TEXT steht um den Prompt, {placeholder} dort, wo der Prompt steht; Flags setzen die Optionen des Stils; {clear} entfernt ihn.',
  // Private results and member defaults
  'refusal.private_not_allowed':
    '{scope, select, workspace {Dieser Workspace} other {Dieser Server}} erlaubt keine privaten Ergebnisse{fromDefault, select, yes {, und deine Voreinstellung verlangt sie: bitte um ein öffentliches mit {platform, select, slack {--public} other {private: False}} oder schalte deine Voreinstellung aus mit {platform, select, slack {/imagine settings --private off} other {/imagine-settings private: False}}} other {; versuche es ohne {platform, select, slack {--private} other {private}}}}.',
  'settings.hint.onOff': '{on} oder {off}',
  'member.ignored':
    'Hier nicht verwendet, weil die Regeln {scope, select, workspace {dieses Workspace} other {dieses Servers}} {count, plural, one {sie} other {sie}} nicht erlauben: deine Voreinstellung {defaults}.',
  'member.title': '<b>Deine Voreinstellungen</b> (überall, wo du Pictor nutzt; eine, die die Regeln eines {scope, select, workspace {Workspace} other {Servers}} nicht erlauben, wird dort nicht verwendet)',
  'member.none': 'Du hast keine festgelegt: Es gelten die Voreinstellungen {scope, select, workspace {dieses Workspace} other {dieses Servers}}.',
  'member.line': '• {name}: {value}{ignored, select, yes { — hier nicht erlaubt, nicht verwendet} refused { — hier nicht erlaubt: ein Auftrag hier wird abgelehnt, außer du bittest um ein öffentliches Ergebnis} other {}}',
  'member.on_off': '{on, select, yes {an} other {aus}}',
  'member.scope':
    '<b>{scope, select, workspace {Dieser Workspace} other {Dieser Server}}</b> (wenn du nichts wählst): Größe {size}, Qualität {quality}, {previews, plural, =0 {keine Vorschauen} one {# Vorschau} other {# Vorschauen}}; bis zu {maxImages, plural, one {# Bild} other {# Bilder}} pro Auftrag; private Ergebnisse {privateResults, select, yes {erlaubt} other {nicht erlaubt}}.',
  'member.how': 'Ändere deine mit {command}; {clear} löscht eine oder alle.',
  'member.saved': 'Deine Voreinstellungen sind gespeichert.',
  'discord.command.settings.name': 'imagine-settings',
  'discord.command.settings.description': 'Deine Voreinstellungen: Größe, Qualität, Format, Anzahl, privat, Vorschauen; ohne Option anzeigen',
  'discord.option.private': 'Nur du siehst den Auftrag und seine Bilder (wenn dieser Server es erlaubt)',
  'discord.option.default_private': 'Deine Aufträge sieht nur du, außer du bittest um etwas anderes',
  'discord.option.default_previews': 'Vorschauen zeigen, während deine Bilder entstehen',
  'discord.option.clear': 'Eine deiner Voreinstellungen löschen, oder alle',
  'discord.choice.clear': '{name, select, all {alle} other {{name}}}',
  'slack.job.private_in_dm': ':lock: Nur du wirst diesen Auftrag sehen: Ich zeichne ihn in unseren Direktnachrichten.',
  'slack.settings.on_off': '{flag} nimmt on oder off.',
  'slack.help.private': '<b>Nur für dich:</b> {private} zeigt den Auftrag nur dir, in unseren Direktnachrichten; {public} zeigt ihn im Kanal, wenn deine Voreinstellung privat ist.',
  'slack.help.settings': '<b>Deine Voreinstellungen:</b> {command} (Größe, Qualität, Format, Anzahl, privat, Vorschauen).',
} as const satisfies Catalog;
