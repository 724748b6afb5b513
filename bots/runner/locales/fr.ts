import type { Catalog } from '../words.js';

/** Français. Vouvoiement ; les mots des commandes, des réglages et des options restent en anglais (ils se tapent ainsi). */
export const fr = {
  'time.resets': '{at} (dans {wait})',
  'time.days': '{days, plural, one {# jour} other {# jours}}',

  'refusal.restarting': 'Le bot redémarre ; réessayez dans une minute.',
  'refusal.scope_not_allowed':
    'Ce bot n’est pas activé pour {scope, select, workspace {cet espace de travail} other {ce serveur}} : son opérateur ne l’y a pas autorisé, il ne crée donc aucune image. Demandez à l’opérateur du bot d’ajouter {scope, select, workspace {cet espace de travail} other {ce serveur}}.',
  'refusal.dms_not_enabled':
    'Ce bot ne crée des images que sur les serveurs où il a été ajouté : son opérateur n’a pas activé les messages privés ni les installations par utilisateur. Utilisez-le sur l’un de ces serveurs.',
  'refusal.member_blocked':
    'Un admin {scope, select, workspace {de cet espace de travail} other {de ce serveur}} vous a interdit de créer des images ici ; demandez-lui si vous pensez qu’il s’agit d’une erreur.',
  'refusal.channel_not_allowed': 'Impossible de créer des images dans ce salon ; utilisez {channels}.',
  'refusal.member_not_allowed':
    'Les admins {scope, select, workspace {de cet espace de travail} other {de ce serveur}} ont choisi qui peut créer des images, et vous n’en faites pas partie ; demandez-leur l’accès.',
  'refusal.blocked_word': 'Votre prompt contient « {word} », qui est bloqué ici ; reformulez-le et réessayez.',
  'refusal.too_many_images': 'Au plus {limit} {limit, plural, one {image} other {images}} par tâche ici ; demandez-en moins.',
  'refusal.quality_not_allowed': 'Cette qualité n’est pas autorisée ici ; choisissez {allowed}.',
  'refusal.high_quality_not_allowed':
    'La qualité high est réservée à certains membres {scope, select, workspace {de cet espace de travail} other {de ce serveur}} ; choisissez une autre qualité ou demandez à un admin.',
  'refusal.size_not_allowed': 'Cette taille n’est pas autorisée ici ; choisissez {allowed}.',
  'refusal.moderation_not_allowed':
    'La modération low n’est pas autorisée ici ; laissez moderation vide pour utiliser le niveau {scope, select, workspace {de cet espace de travail} other {de ce serveur}}.',
  'refusal.user_concurrency':
    'Vous avez déjà {used} {used, plural, one {tâche} other {tâches}} en attente ou en cours, le maximum autorisé à la fois ({limit}) ; attendez qu’une se termine ou annulez-en une.',
  'refusal.user_cooldown': 'Vous pouvez lancer une tâche toutes les {every} ; réessayez dans {wait}.',
  'refusal.scope_paused':
    '{scope, select, workspace {Cet espace de travail est en pause} dm {Votre utilisation du bot hors des serveurs est en pause} other {Ce serveur est en pause}} : {used} ont été dépensés au cours de la dernière heure, plus que les {limit} par heure que permet l’usage habituel. Aucune nouvelle tâche n’est acceptée tant que l’opérateur du bot (qui paie sa clé d’API) ne reprend pas depuis la console Pictor.',
  'refusal.budget_reached':
    '{owner, select, user {Vous avez atteint votre budget} scope {{scope, select, workspace {Cet espace de travail a atteint son budget} dm {Votre utilisation du bot hors des serveurs a atteint son budget} other {Ce serveur a atteint son budget}}} other {Le compte entier (tous les serveurs, espaces de travail et outils partageant cette clé d’API) a atteint son budget}} {period, select, day {quotidien} other {mensuel}} de {limit} (dépensé : {used}, reste : {left}) ; il sera réinitialisé à {reset}.',
  'refusal.budget_would_pass':
    'Cette tâche pourrait coûter jusqu’à {estimate}, plus que les {left} qui restent {owner, select, user {de votre budget} scope {{scope, select, workspace {du budget de cet espace de travail} dm {de votre budget hors des serveurs} other {du budget de ce serveur}}} other {du budget du compte entier}} {period, select, day {quotidien} other {mensuel}} de {limit} (dépensé : {used}) ; moins d’images ou des images moins chères pourraient passer, et le budget sera réinitialisé à {reset}.',
  'refusal.other_limit': 'Cette tâche a été refusée par la limite {code}.',
  'refusal.queue_full':
    'Le bot est occupé : {queued} tâches attendent, le maximum qu’il met en file à la fois ({max}), celle-ci n’a donc pas été lancée et ne coûte rien ; {known, select, yes {au rythme actuel, une nouvelle tâche attendrait environ {wait}, réessayez donc à ce moment-là.} other {aucune n’a été envoyée depuis une minute, réessayez donc dans quelques minutes.}}',
  'refusal.queue_full_images':
    'Le bot est occupé : les modifications en attente occupent {held} d’images, et les {job} de celle-ci dépasseraient le maximum qu’il garde à la fois ({max}), elle n’a donc pas été lancée et ne coûte rien ; {known, select, yes {au rythme actuel, une nouvelle tâche attendrait environ {wait}, réessayez donc à ce moment-là.} other {aucune n’a été envoyée depuis une minute, réessayez donc dans quelques minutes.}}',
  'refusal.input_too_large':
    'Les images de cette modification pèsent {job}, plus que ce que ce bot accepte à la fois ({max}), elle n’a donc pas été lancée et ne coûte rien ; utilisez moins d’images ou des images plus petites.',

  'failure.internal_error': 'Un problème est survenu dans le bot ; réessayez, et prévenez l’opérateur du bot si cela se reproduit.',
  'failure.validation':
    '{subject, select, prompt {Le prompt n’est pas valide} image {Une image d’entrée n’est pas valide} other {L’option {option} n’est pas valide}} : {detail}{allowed, select, some { (autorisé : {values})} other {}}.',
  'failure.moderation_blocked': 'Le service d’images a refusé cette demande au titre de sa politique de contenu ; modifiez le prompt (ou les images) et réessayez.',
  'failure.rate_limited': 'Le service d’images est occupé pour le moment ; réessayez dans {known, select, yes {environ {wait}} other {environ une minute}}.',
  'failure.quota_exhausted': 'Le compte du service d’images n’a plus de crédit ; prévenez l’opérateur du bot.',
  'failure.authentication_failed': 'Le service d’images n’a pas accepté la clé d’API du bot ; prévenez l’opérateur du bot.',
  'failure.permission_denied': 'Le service d’images ne permet pas au compte du bot d’utiliser ce modèle ; prévenez l’opérateur du bot.',
  'failure.not_found': 'Le bot est configuré avec une mauvaise adresse du service d’images ; prévenez l’opérateur du bot.',
  'failure.bad_request_option': 'Le service d’images a refusé l’option {option} ; modifiez-la et réessayez.',
  'failure.bad_request': 'Le service d’images a refusé la demande ; vérifiez les options et les images, puis réessayez.',
  'failure.server_error':
    '{kind, select, stream {Le service d’images a signalé une erreur pendant la création des images} overloaded {Le service d’images est surchargé et n’a pas répondu après plusieurs essais} other {Le service d’images a rencontré une erreur interne et ne s’est pas rétabli après plusieurs essais}} ; réessayez {known, select, yes {dans environ {wait}} other {dans quelques minutes}}.',
  'failure.api_error': 'Le service d’images a répondu par une erreur inattendue ; réessayez dans quelques minutes.',
  'failure.connection_failed': 'Le bot n’a pas pu joindre le service d’images ; réessayez dans quelques minutes.',
  'failure.timeout':
    '{kind, select, idle {Le service d’images n’a rien envoyé pendant {howLong}, la tâche a donc été arrêtée.} other {La tâche a pris plus de {howLong}, elle a donc été arrêtée.}} Elle avait atteint le service et a peut-être été facturée (son estimation compte dans le budget), elle n’a donc pas été renvoyée ; Réessayer lance une nouvelle tâche, éventuellement dans une qualité inférieure.',
  'failure.stream_broken':
    'La connexion au service d’images a été coupée après l’arrivée de la demande, avant que toutes les images ne parviennent. Elle a peut-être été facturée (l’estimation de chaque image manquante compte dans le budget), elle n’a donc pas été renvoyée ; Réessayer lance une nouvelle tâche.',
  'failure.aborted': 'La tâche a été arrêtée avant la fin ; réessayez.',
  'failure.bad_response': 'Le service d’images a répondu par autre chose que les images demandées ; cela a peut-être été facturé, la tâche n’a donc pas été renvoyée.',

  'job.queue_trouble': 'La file partagée est momentanément injoignable, cela prend donc plus de temps que d’habitude ; votre tâche garde sa place et rien n’est facturé avant son exécution.',
  'job.kept_images': '{count, plural, one {L’image terminée avant cela est ici ; elle est facturée.} other {Les # images terminées avant cela sont ici ; elles sont facturées.}}',

  'usage.your_spend': '<b>Vos dépenses</b> (UTC) : {today} aujourd’hui · {month} ce mois-ci',
  'usage.no_budget': 'Aucun budget ne s’applique à vous : l’opérateur du bot n’en a fixé aucun.',
  'usage.budgets': '<b>Budgets</b>',
  'usage.cap':
    '• {whose, select, user {Votre budget} account {Le budget du compte entier} other {{scope, select, dm {Votre budget hors des serveurs} workspace {Le budget de cet espace de travail} other {Le budget de ce serveur}}}} {period, select, day {quotidien} other {mensuel}}{setBy, select, chat { (fixé par un admin)} other {}} : reste {left} sur {limit} (dépensé : {spent}) ; réinitialisé à {reset}',
  'usage.scope_spend': '<b>{scope, select, workspace {Cet espace de travail} other {Ce serveur}}</b> (UTC) : {today} aujourd’hui · {month} ce mois-ci',
  'usage.no_jobs_yet': 'Aucune tâche terminée ce mois-ci pour l’instant.',
  'usage.top_users': 'Principaux utilisateurs ce mois-ci :',
  'usage.top_user': '{rank}. {user} {usd} ({jobs} {jobs, plural, one {tâche} other {tâches}})',

  'budget.amount_hint': 'Indiquez le budget en dollars US, 0 ou plus (par ex. 2.50), ou clear pour revenir au réglage de l’opérateur.',
  'budget.not_admin': 'Seul un admin {scope, select, workspace {de cet espace de travail} other {de ce serveur}} peut modifier ses budgets.',
  'budget.above_operator_cap':
    'L’opérateur du bot plafonne {whose, select, user {le budget {period, select, day {quotidien} other {mensuel}} de chaque utilisateur} other {le budget {period, select, day {quotidien} other {mensuel}} {scope, select, workspace {de cet espace de travail} other {de ce serveur}}}} à {operator} ({variable}) ; un admin peut le baisser, pas le relever. Demandez à l’opérateur de le relever.',
  'budget.cleared':
    '{whose, select, user {Le budget {period, select, day {quotidien} other {mensuel}} de chaque utilisateur} other {Le budget {period, select, day {quotidien} other {mensuel}} {scope, select, workspace {de cet espace de travail} other {de ce serveur}}}} revient au réglage de l’opérateur ({operatorSet, select, yes {{operator}} other {aucune limite}}).',
  'budget.set':
    '{whose, select, user {Le budget {period, select, day {quotidien} other {mensuel}} de chaque utilisateur} other {Le budget {period, select, day {quotidien} other {mensuel}} {scope, select, workspace {de cet espace de travail} other {de ce serveur}}}} est désormais de {usd} pour {scope, select, workspace {cet espace de travail} other {ce serveur}} (plafond de l’opérateur : {operatorSet, select, yes {{operator}} other {aucun}}).',

  'settings.not_admin': 'Seul un admin {scope, select, workspace {de cet espace de travail} other {de ce serveur}} peut modifier ses réglages.',
  'settings.unknown': 'Choisissez parmi {names}.',
  'settings.takes': '{setting} attend {hint}.',
  'settings.changed': '{setting} vaut désormais {value} (avant : {wasDefault, select, yes {la valeur par défaut} other {{was}}}).',
  'settings.cleared': '{setting} revient à sa valeur par défaut (avant : {wasDefault, select, yes {la valeur par défaut} other {{was}}}).',
  'settings.at_most': 'au plus {max}',
  'settings.beyond_operator': 'L’opérateur du bot autorise {allowed} pour {setting} ; un admin peut choisir dans cette limite, pas au-delà. Demandez à l’opérateur de la changer.',
  'settings.title':
    'Réglages {scope, select, workspace {de cet espace de travail} other {de ce serveur}} — origine de chacun : opérateur (l’environnement du bot), admin (fixé ici), défaut.',
  'settings.allowed_here':
    '• bot autorisé ici : {allowed, select, yes {oui} other {non — l’opérateur n’a pas autorisé {scope, select, workspace {cet espace de travail} other {ce serveur}}, chaque tâche est donc refusée}} (opérateur)',
  'settings.line': '• {setting} : {value} ({source})',
  'settings.operator_words': '• mots bloqués par l’opérateur (partout) : {words} (opérateur)',
  'settings.source': '{source, select, operator {opérateur} admin {admin} other {défaut}}',
  'settings.source_admin': 'admin : {who}, {when}',
  'settings.how_to_change': 'Modifiez-en un avec {command} (clear pour la valeur par défaut ; add ou remove pour les listes).',
  'settings.empty.channels': 'tous les salons',
  'settings.empty.allowed': 'tout le monde',
  'settings.empty.blocked': 'personne',
  'settings.empty.none': 'aucun',
  'settings.empty.highQualityFor': 'quiconque peut l’utiliser',
  'settings.hint.channels': 'des mentions de salons (#art #memes) ; clear pour tous les salons',
  'settings.hint.allowed': 'des mentions de membres ou de rôles (@artists @sam) ; clear pour tout le monde',
  'settings.hint.blocked': 'des mentions de membres (@sam)',
  'settings.hint.blockedWords': 'des mots ou expressions séparés par des virgules (gore, red fox)',
  'settings.hint.highQualityFor': 'des mentions de membres ou de rôles qui peuvent utiliser la qualité high ; clear pour tous ceux qui peuvent l’utiliser',
  'settings.hint.someOf': 'une ou plusieurs valeurs parmi {values}',
  'settings.hint.oneOf': 'une valeur parmi {values}',
  'settings.hint.moderation': '{low} ou {auto}',
  'settings.hint.number': 'un nombre entier de {min} à {max}',

  'button.cancel': 'Annuler',
  'button.retry': 'Réessayer',
  'button.reroll': 'Relancer',
  'button.delete': 'Supprimer',
  'button.edit': 'Modifier',
  'button.edit_image': '{images, plural, one {Modifier} other {Modifier {index}}}',

  'discord.job.getting_ready': '⏳ Préparation…',
  'discord.job.queued': '{ahead, plural, =0 {⏳ Prochaine en file…} one {⏳ En file : # tâche avant la vôtre.} other {⏳ En file : # tâches avant la vôtre.}}',
  'discord.job.drawing': '🎨 {n, plural, one {{kind, select, edit {Modification en cours} other {Dessin de l’image}}} other {Dessin de # images}}…',
  'discord.job.preview': '🎨 Dessin… aperçu {preview}{n, plural, one {} other { (image {image} sur {n})}}',
  'discord.job.cost': '{basis, select, table {{usd}} other {jusqu’à {usd} (estimation)}}',
  'discord.job.elapsed': '{time}',
  'discord.job.restarted_before_done': '🔌 Le bot a redémarré avant la fin ; appuyez sur Réessayer pour relancer.',
  'discord.job.cancelled_by': '✖️ Annulée par {user}.',
  'discord.job.interrupted': '🔌 Cette tâche s’est arrêtée au redémarrage du bot ; appuyez sur Réessayer pour la relancer.',
  'discord.job.too_large_to_upload': '{images, plural, one {L’image} other {L’image {index}}} est trop lourde pour être envoyée ici (limite de {limit} par fichier), même réencodée.',
  'discord.job.reencoded':
    '{images, plural, one {L’image} other {L’image {index}}} a été réencodée en {format}{shrunk, select, yes { et réduite à {percent} %} other {}} pour tenir dans la limite d’envoi de ce serveur de {limit} par fichier.',
  'discord.job.more_images': 'Autres images ({from}–{to} sur {of})',
  'discord.job.upload_separately': 'Les images étaient trop lourdes pour être envoyées ensemble ici ; elles suivent dans des messages séparés.',

  'history.none_kept': '{icon} Ce bot ne garde aucun historique.',
  'history.erased': '{icon} Votre historique a été effacé ({count} {count, plural, one {tâche} other {tâches}}). Les images déjà publiées restent dans leurs salons.',
  'history.not_admin': '{icon} Seul un admin {scope, select, workspace {de cet espace de travail} other {de ce serveur}} peut voir son historique.',
  'history.title': '{whose, select, scope {<b>Images récentes {scope, select, workspace {de cet espace de travail} other {de ce serveur}}</b>} other {<b>Vos dernières images</b> (vous seul les voyez)}}',
  'history.empty': 'Rien pour l’instant.',
  'history.reroll_numbered': 'Relancer {index}',
  'discord.history.line':
    '{rank}. {when}{author} « {prompt} » · {n} × {size, select, default {taille par défaut} other {{size}}}, {quality, select, default {qualité par défaut} other {{quality}}} · {costKnown, select, yes {{cost}} other {{status, select, completed {terminée} failed {échouée} other {annulée}}}}{hasLink, select, yes { · [message]({link})} other {}}',

  'discord.settings.not_admin': '✋ Seul un admin de ce serveur peut voir et modifier ses réglages.',
  'discord.unknown_interaction': 'Je ne connais pas cette commande ni ce bouton (ils viennent peut-être d’une ancienne version de moi).',
  'discord.button.too_old': 'Cette tâche est trop ancienne : je n’ai plus ce qu’il lui faut. Lancez-en une nouvelle avec /imagine ou /edit.',
  'discord.button.unknown': 'Ce bouton ne fait plus rien.',
  'discord.button.finished': 'Cette tâche est déjà terminée.',
  'discord.button.too_late_to_cancel': 'Cette tâche est sur le point de se terminer et ne peut plus être annulée.',
  'discord.button.only_requester': 'Seul {user} ou un admin peut {action, select, delete {supprimer ce message} other {annuler cette tâche}}.',
  'discord.button.runs_elsewhere': 'Cette tâche est dessinée par une autre instance du bot, injoignable : elle affichera le résultat une fois terminée.',
  'discord.edit.title_result': '{images, plural, one {Modifier l’image} other {Modifier l’image {index}}}',
  'discord.edit.title_message': '{images, plural, one {Modifier l’image} other {Modifier # images}}',
  'discord.edit.form_expired': 'Ce formulaire de modification est trop ancien : je n’ai plus ses images. Utilisez à nouveau « Modifier l’image » sur le message.',
  'discord.edit.image_gone': 'Cette image n’est plus conservée ; modifiez-en une plus récente, ou utilisez /edit avec le fichier.',
  'discord.edit.placeholder': 'par ex. fais-en une scène de nuit, avec la pleine lune',
  'discord.edit.message_image': '{images, plural, one {l’image de ce message} other {l’image {index} de ce message}}',
  'discord.edit.message_has_no_images': 'Ce message n’a aucune image à modifier (pièces jointes PNG, JPEG ou WebP).',
  'discord.edit.message_has_too_many': 'Une modification accepte au plus {max} images, et ce message en a {count}.',
  'discord.edit.message_links_elsewhere': 'Je ne modifie que des images envoyées sur Discord, et ce message renvoie vers des images ailleurs.',
  'discord.input.no_images': 'Il n’y a aucune image à modifier : joignez une image PNG, JPEG ou WebP.',
  'discord.input.too_many': 'Une modification accepte au plus {max} images, et il y en a {count}.',
  'discord.input.host_not_allowed': 'Je ne télécharge que des images envoyées sur Discord, et {label} n’y est pas hébergée ; envoyez le fichier lui-même.',
  'discord.input.too_large': '{label} ({file}) pèse {size} ; chaque image doit faire moins de {max}.',
  'discord.input.too_large_read': '{label} ({file}) est trop lourde ; {why, select, limit {chaque image doit faire moins de {max}} other {elle est plus grande que ce qu’a indiqué Discord ; joignez-la à nouveau}}.',
  'discord.input.download_failed': 'Je n’ai pas pu télécharger {label} ({file}) depuis Discord ; son lien a peut-être expiré, joignez-la à nouveau.',
  'discord.input.not_an_image': '{label} ({file}) n’est pas une image PNG, JPEG ou WebP.',

  'edit.what_should_change': 'Que faut-il changer ?',
  'error.on_my_side': 'Un problème est survenu de mon côté ; réessayez dans un instant.',

  'discord.command.imagine.name': 'imaginer',
  'discord.command.imagine.description': 'Dessiner des images à partir d’une description',
  'discord.command.edit.name': 'modifier',
  'discord.command.edit.description': 'Modifier ou combiner des images avec une description',
  'discord.command.edit_image.name': 'Modifier l’image',
  'discord.command.usage.name': 'imaginer-conso',
  'discord.command.usage.description': 'Ce que vous avez dépensé aujourd’hui et ce mois-ci, et ce qu’il reste de vos budgets',
  'discord.command.history.name': 'imaginer-historique',
  'discord.command.history.description': 'Vos 10 dernières images, en privé ; les admins voient celles du serveur ; forget efface',
  'discord.command.admin.name': 'imaginer-admin',
  'discord.command.admin.description': 'Admins du serveur : modifier les budgets et règles d’images de ce serveur',
  'discord.command.admin.budget': 'Fixer un budget du serveur, au plus le plafond de l’opérateur ; clear y revient',
  'discord.command.admin.settings': 'Afficher chaque réglage de ce serveur et son origine (opérateur ou admin)',
  'discord.command.admin.set': 'Modifier un réglage de ce serveur, dans les limites fixées par l’opérateur',
  'discord.option.prompt_imagine': 'Ce qu’il faut dessiner',
  'discord.option.prompt_edit': 'Ce qu’il faut changer',
  'discord.option.image': '{first, select, yes {L’image à modifier (PNG, JPEG ou WebP)} other {Une autre image (PNG, JPEG ou WebP)}}',
  'discord.option.size': 'Largeur x hauteur du résultat',
  'discord.option.quality': 'Une meilleure qualité coûte plus cher et prend plus de temps',
  'discord.option.background': 'transparent exige le format {formats}',
  'discord.option.format': 'Format de fichier du résultat',
  'discord.option.count': 'Combien d’images',
  'discord.option.show': 'Quel historique (par défaut : le vôtre)',
  'discord.option.cap': 'Quel budget',
  'discord.option.usd': 'Dollars US, 0 ou plus (par ex. 2.50), ou clear pour le réglage de l’opérateur',
  'discord.option.setting': 'Quel réglage',
  'discord.option.value': '#salons, @rôles/@membres, mots, un nombre… ; clear pour le défaut ; add …/remove … pour les listes',
  'discord.choice.size': '{size} {shape, select, square {carré} landscape {paysage} other {portrait}}{isDefault, select, yes { (par défaut)} other {}}',
  'discord.choice.quality': '{quality, select, auto {auto (le service choisit)} other {{quality}}}{isDefault, select, yes { (par défaut)} other {}}',
  'discord.choice.background': '{background, select, transparent {transparent (format {formats} requis)} other {{background}}}{isDefault, select, yes { (par défaut)} other {}}',
  'discord.choice.format': '{transparent, select, yes {{format}} other {{format} (sans transparence)}}{isDefault, select, yes { (par défaut)} other {}}',
  'discord.choice.show': '{show, select, mine {le mien} server {serveur (admins)} other {effacer le mien}}',

  'button.try_again': 'Réessayer',
  'slack.job.header': '{user} {kind, select, edit {demande de modifier {inputs, plural, one {une image} other {# images}}} other {demande}} : {prompt}',
  'slack.job.text': 'Pictor : {status}',
  'slack.job.plain_status':
    '{stage, select, queued {{ahead, plural, =0 {en file} other {en file, # avant}}} running {dessin en cours…} posting {créée ({summary}), publication des images} done {terminée ({summary})} not_posted {créée, mais les images n’ont pas pu être publiées} failed {échec : {failure}} other {annulée}}',
  'slack.job.actions_text': 'Relancer, Modifier ou Supprimer : {prompt}',
  'slack.job.finished_where':
    '{where, select, posting {Cette tâche est terminée : ses images sont en cours de publication, suivies de Relancer, Modifier et Supprimer.} dm {Cette tâche est terminée : ses images et leurs boutons Relancer, Modifier et Supprimer ont été envoyés en message privé à la personne qui l’a demandée.} link {Cette tâche est terminée : ses images et leurs boutons Relancer, Modifier et Supprimer sont <{link}|ici>.} other {Cette tâche est terminée : ses images sont publiées après son message, avec leurs boutons Relancer, Modifier et Supprimer.}}',
  'slack.job.caption': '{user} {images, plural, one {voici votre image} other {voici vos # images}} : {prompt}\n{summary}',
  'slack.job.cost': '{basis, select, table {{usd}} other {jusqu’à {usd} (estimation)}}',
  'slack.job.elapsed': '{time}',
  'slack.job.queued': '{ahead, plural, =0 {:hourglass_flowing_sand: En file, prochaine} other {:hourglass_flowing_sand: En file, # avant}}',
  'slack.job.drawing': '{previews, plural, =0 {:art: Dessin en cours…} other {:art: Dessin en cours… l’aperçu # est dans le fil}}',
  'slack.job.posting': ':outbox_tray: Créée ({summary}) ; publication {images, plural, one {de l’image} other {des # images}}…',
  'slack.job.done':
    ':white_check_mark: Terminé · {summary} · {images, plural, one {l’image est} other {# images sont}} {where, select, dm {dans vos messages privés avec moi} channel {ci-dessous} other {dans le fil}}{actionsBeside, select, yes {, avec Relancer, Modifier et Supprimer} other {}}',
  'slack.job.not_posted': ':warning: {images, plural, one {L’image a été créée} other {Les images ont été créées}} ({summary}) mais n’ont pas pu être publiées sur Slack ; appuyez sur Relancer pour réessayer.',
  'slack.job.failed': 'La tâche a échoué.',
  'slack.job.restarted': ':no_entry_sign: Arrêtée car le bot a redémarré ; appuyez sur Relancer pour la relancer.',
  'slack.job.cancelled_by': ':no_entry_sign: Annulée par {user}',
  'slack.job.preview': 'Aperçu {preview}{images, plural, one {} other { de l’image {image}}}',
  'slack.job.image': 'Image {index}',
  'slack.job.kept_images': '{user} {kept}',
  'slack.job.not_in_channel': 'Je ne peux pas publier dans cette conversation, je n’ai donc pas lancé votre tâche. Invitez-moi avec `/invite @Pictor` (ou utilisez-moi dans un canal où je suis) et réessayez.',
  'slack.job.not_posted_at_all': 'Je n’ai pas pu publier le message de votre tâche sur Slack, je ne l’ai donc pas lancée ; réessayez dans un instant.',

  'slack.input.no_images': 'Il n’y a ici aucune image PNG, JPEG ou WebP à modifier ; joignez-en une (ou utilisez `/imagine` pour créer une nouvelle image).',
  'slack.input.too_many': 'Cela fait {count} images ; une modification en accepte au plus {max}.',
  'slack.input.too_large': '{named, select, yes {{name}} other {{what, select, image {Une image} other {Un fichier}}}} pèse {size} ; chaque image doit faire moins de {max}.',
  'slack.input.wrong_type': '{named, select, yes {{name}} other {{what, select, image {Une image} other {Un fichier}}}} est de type {type} ; je peux modifier les images PNG, JPEG et WebP.',
  'slack.input.gone': '{named, select, yes {{name}} other {{what, select, image {Une image} other {Un fichier}}}} n’est plus disponible dans Slack.',
  'slack.input.host_not_allowed':
    '{named, select, yes {{name}} other {{what, select, image {Une image} other {Un fichier}}}} est stocké sur {host}, qui n’est pas un hébergeur de fichiers de Slack ; je ne l’ai donc pas téléchargé.',
  'slack.input.download_failed':
    '{named, select, yes {{name}} other {{what, select, image {Une image} other {Un fichier}}}} n’a pas pu être téléchargé depuis Slack{reason, select, redirects { (trop de redirections)} status { (statut {status})} other {}} ; réessayez.',
  'slack.input.sign_in_page': 'Slack a répondu par une page de connexion au lieu de {named, select, yes {{name}} other {du fichier}} : l’app a besoin du scope files:read (réinstallez-la depuis son manifeste).',
  'slack.input.not_an_image': '{named, select, yes {{name}} other {{what, select, image {Une image} other {Un fichier}}}} n’est pas une image PNG, JPEG ou WebP (vérifié d’après son contenu).',
  'slack.input.no_address': '{named, select, yes {{name}} other {{what, select, image {Une image} other {Un fichier}}}} n’a aucune adresse d’où je puisse le télécharger.',
  'slack.input.larger_than_said': '{named, select, yes {{name}} other {{what, select, image {Une image} other {Un fichier}}}} est plus gros que ce qu’a indiqué Slack ; envoyez-le à nouveau.',

  'slack.imagine.example': '{command} un phare au crépuscule, aquarelle --size 1536x1024',
  'slack.imagine.missing_prompt': 'Dites ce qu’il faut dessiner, par exemple {example}.',
  'slack.flag.unknown': '{flag} n’est pas une option.{meant, select, yes { Vouliez-vous dire {near} ?} other {}} Les options sont {flags}.',
  'slack.flag.needs_value': '{flag} a besoin d’une valeur : {allowed}.',
  'slack.flag.bad_value': '{given} n’est pas autorisé : {flag} accepte {allowed}.',
  'slack.flag.also': '{base} ; aussi {aliases}',
  'slack.flag.help':
    '{flag, select, size {largeur x hauteur} quality {détail, temps et prix} background {transparent exige png ou webp} format {type de fichier} n {combien d’images} compression {pour jpeg et webp} other {sévérité du filtre de contenu}}',
  'slack.help.flag': '• {flag} {allowed}{hasDefault, select, yes { (par défaut {fallback})} other {}} : {help}',
  'slack.help.make': '<b>Créer des images :</b> {example}',
  'slack.help.flags': 'Les options se placent n’importe où dans le texte :',
  'slack.help.edit':
    '<b>Modifier des images :</b> choisissez <b>Edit image</b> dans le menu ⋯ d’un message avec des images, lancez {command} pour en envoyer jusqu’à 10, ou mentionnez-moi dans un message (ou un fil) avec des images : _@Pictor rends le ciel violet_.',
  'slack.help.progress': 'L’avancement s’affiche dans le message que je publie ; les images arrivent dans son fil, avec les boutons <b>Relancer</b> et <b>Modifier</b>.',
  'slack.help.usage': '<b>Vos dépenses :</b> {command} (aujourd’hui, ce mois-ci, ce qu’il reste de vos budgets).',
  'slack.help.admins': '<b>Admins du bot :</b> {command} (user-daily, user-monthly, workspace-daily, workspace-monthly ; `clear` pour le réglage de l’opérateur).',

  'slack.edit.title': 'Modifier l’image',
  'slack.edit.editing': 'Modification de {count, plural, one {1 image} other {# images}} : {names}',
  'slack.edit.files': 'Images (jusqu’à {max})',
  'slack.edit.placeholder': 'rends le ciel violet',
  'slack.edit.label': '{field, select, size {Taille} quality {Qualité} background {Arrière-plan} format {Format} other {Images}}',
  'slack.edit.out_of_date': 'Ce formulaire n’est plus à jour ; fermez-le et recommencez la modification.',
  'slack.edit.say_what': 'Dites ce qu’il faut changer.',
  'slack.edit.pick_one': 'Choisissez parmi {values}.',
  'slack.edit.only_images': 'Seules les images PNG, JPEG et WebP peuvent être modifiées.',
  'slack.edit.could_not_open': 'Je n’ai pas pu ouvrir le formulaire de modification ; réessayez.',
  'slack.button.not_running': 'Cette tâche n’est plus en cours.',
  'slack.button.only_requester_cancel': 'Seule la personne qui a lancé cette tâche, ou un admin, peut l’annuler.',
  'slack.button.gone_reroll': 'Je n’ai plus les détails de cette tâche ; lancez-en une nouvelle avec {command}.',
  'slack.button.gone_delete': 'Je n’ai plus les détails de cette tâche ; supprimez son message depuis le menu de Slack.',
  'slack.button.only_requester_delete': 'Seul {user} ou un admin peut supprimer ce message.',
  'slack.button.could_not_delete': 'Je n’ai pas pu supprimer ce message ; réessayez.',
  'slack.button.gone_edit': 'Je n’ai plus les images de cette tâche ; utilisez plutôt le raccourci *Edit image* sur les images.',
  'slack.mention.example': '@Pictor rends le ciel violet --size 1536x1024',
  'slack.settings.not_admin': ':raised_hand: Seul un admin de cet espace de travail peut voir et modifier ses réglages.',
  'slack.settings.usage': 'Tapez {how} : SETTING est l’un de {names} ; {show} les affiche tous.',
  'slack.budget.usage':
    'Tapez {how} : CAP est user-daily, user-monthly, workspace-daily ou workspace-monthly ; USD vaut 0 ou plus (par ex. 2.50), ou `clear` pour le réglage de l’opérateur.',
  'slack.history.line':
    '{rank}. {when}{author} dans {channel} « {prompt} » · {n} × {size, select, default {taille par défaut} other {{size}}}, {quality, select, default {qualité par défaut} other {{quality}}} · {costKnown, select, yes {{cost}} other {{status, select, completed {terminée} failed {échouée} other {annulée}}}}{hasLink, select, yes { · <{link}|message>} other {}}',
  'slack.home.usage_header': 'Vos dépenses et budgets',
  'slack.home.history_header': 'Vos images récentes',
  'slack.home.history_empty': 'Rien pour l’instant : créez votre première image avec {command} dans n’importe quel canal.',
  'slack.home.thumbnail': 'L’image de « {prompt} »',
  'slack.home.defaults_header': 'Ce que vous obtenez sans rien choisir',
  'slack.home.defaults':
    'Taille {size}, qualité {quality}, {previews, plural, =0 {aucun aperçu} one {# aperçu} other {# aperçus}} pendant le dessin. Ici, vous pouvez demander jusqu’à {maxImages} {maxImages, plural, one {image} other {images}} par tâche, en qualité {qualities} et en taille {sizes}.',
  'slack.home.admin_header': 'Cet espace de travail (admins seulement)',
  'slack.home.how': 'Créez des images avec {command} dans n’importe quel canal, modifiez-les avec *Edit image* dans le menu ⋯ d’un message, ou mentionnez-moi. Vous seul voyez cette page.',
  'slack.step.bad_inputs': 'L’étape a besoin d’un prompt, d’un canal et de la personne pour qui elle s’exécute ; la taille, la qualité et le nombre doivent être des valeurs que Pictor accepte.',
  'slack.step.cancelled': 'La tâche d’image a été arrêtée avant la fin.',
  'slack.step.not_posted': 'Les images ont été créées mais n’ont pas pu être publiées dans le canal.',

  // House styles, role budgets and the audit channel
  'budget.role_set':
    '{scope, select, workspace {Les membres du groupe d’utilisateurs {role}} other {Les membres ayant le rôle {role}}} ont désormais {usd} chacun {period, select, day {par jour} other {par mois}}, à la place du budget de chaque utilisateur ; un membre qui en a plusieurs obtient le plus généreux (plafond de l’opérateur par utilisateur : {operatorSet, select, yes {{operator}} other {aucun}}).',
  'budget.role_cleared':
    '{scope, select, workspace {Le groupe d’utilisateurs {role}} other {Le rôle {role}}} n’a plus de budget {period, select, day {quotidien} other {mensuel}} : ses membres retrouvent le budget de chaque utilisateur, sauf si un autre de leurs {scope, select, workspace {groupes} other {rôles}} en a un.',
  'budget.role_member_caps_only':
    'Le budget d’un {scope, select, workspace {groupe d’utilisateurs} other {rôle}} est ce que chacun de ses membres peut dépenser : utilisez user-daily ou user-monthly.',
  'budget.too_many_roles':
    '{scope, select, workspace {Cet espace de travail} other {Ce serveur}} a déjà des budgets pour {max} {scope, select, workspace {groupes d’utilisateurs} other {rôles}}, le maximum ; supprimez-en un d’abord.',
  'usage.role_cap':
    '• Votre budget {period, select, day {quotidien} other {mensuel}}{setBy, select, role {, celui de votre {scope, select, workspace {groupe d’utilisateurs} other {rôle}} {role}} other {}} : reste {left} sur {limit} (dépensé : {spent}) ; réinitialisé à {reset}{setBy, select, unknown_roles {. Vos {scope, select, workspace {groupes d’utilisateurs} other {rôles}} n’ont pas pu être lus pour l’instant : le plus petit budget qui pourrait être le vôtre s’applique (celui de {role}).} other {}}',
  'usage.role_budgets':
    '<b>Budgets des {scope, select, workspace {groupes d’utilisateurs} other {rôles}}</b> (chaque membre obtient le plus généreux des siens, à la place du budget de chaque utilisateur) :',
  'usage.role_budget':
    '• {role} : {hasDaily, select, yes {{daily} par jour} other {le budget de chaque utilisateur par jour}} · {hasMonthly, select, yes {{monthly} par mois} other {le budget de chaque utilisateur par mois}}',
  'discord.option.role':
    'Un rôle : ses membres ont ce budget à la place de celui de chacun (user-daily, user-monthly)',
  'slack.budget.group_usage':
    'Pour un groupe d’utilisateurs, dites {how} : chacun de ses membres a ce budget à la place du budget de chaque utilisateur.',
  'slack.budget.unknown_group':
    'Je ne trouve pas le groupe d’utilisateurs {group} dans cet espace de travail{missingScope, select, yes { : l’app a besoin du scope usergroups:read (réinstallez-la depuis son manifeste)} other {}}.',
  'refusal.style_unknown':
    '{count, plural, =0 {Il n’y a pas encore de style maison ici, donc « {style} » ne peut pas être utilisé ; retirez le style ou demandez à un admin de le définir.} other {Il n’y a pas de style maison « {style} » ici ; choisissez-en un parmi {styles}.}}',
  'refusal.style_option_not_allowed': 'Le style maison « {style} » demande {option} {value}, ce qui n’est pas autorisé ici ; choisissez {option} vous-même, prenez un autre style, ou demandez à un admin de le modifier.',
  'refusal.style_blocked_word': 'Le style maison « {style} » ajoute « {word} », qui est bloqué ici ; choisissez un autre style ou demandez à un admin de le modifier.',
  'styles.title': '<b>Styles maison</b> ({count} sur {max} au plus) ; les membres en choisissent un avec {how} :',
  'styles.none': 'Aucun style maison pour l’instant ; les admins en définissent un avec {command}.',
  'styles.line': '• {name} : « {text} »{hasOptions, select, yes { ({options})} other {}}',
  'styles.defined': 'Style maison {name} {replaced, select, yes {remplacé} other {défini}} : « {text} »{hasOptions, select, yes { ({options})} other {}}. Les membres le choisissent avec {how}.',
  'styles.removed': 'Style maison {name} supprimé ; une tâche qui le nomme est refusée.',
  'styles.unknown': 'Il n’y a pas de style maison {name} ici.',
  'styles.invalid_name': 'Le nom d’un style compte 1 à 32 lettres minuscules, chiffres, - ou _ (p. ex. neon-poster) ; « {name} » n’en est pas un.',
  'styles.invalid_text':
    'Le texte d’un style fait au plus {max} caractères, avec {placeholder} au plus une fois, là où va le prompt du membre (p. ex. « neon-lit, {placeholder}, synthwave palette ») ; un texte sans lui va après le prompt.',
  'styles.too_many': '{scope, select, workspace {Cet espace de travail a} other {Ce serveur a}} déjà {max} styles maison, le maximum ; supprimez-en un d’abord.',
  'styles.not_admin': 'Seul un admin de {scope, select, workspace {cet espace de travail} other {ce serveur}} peut définir des styles maison.',
  'styles.choice': '{name} : {text}',
  'styles.more': '… et {count} de plus.',
  'discord.command.admin.styles': 'Lister les styles maison de ce serveur',
  'discord.command.admin.style': 'Définir ou remplacer un style maison ; text clear le supprime',
  'discord.option.style': 'Un style maison de ce serveur : du texte autour de votre prompt, et ses options',
  'discord.option.style_name': 'Le nom du style (lettres minuscules, chiffres, - ou _)',
  'discord.option.style_text': 'Texte autour du prompt : avant {placeholder} après ; ou clear pour supprimer le style',
  'slack.help.style': '<b>Styles maison :</b> {flag} ajoute un style de cet espace de travail à votre prompt ; {command} les liste.',
  'slack.flag.style_value': 'le nom d’un des styles maison de cet espace de travail',
  'slack.styles.usage':
    'Écrivez {how} : NAME est en lettres minuscules, chiffres, - ou _ ; TEXT entoure le prompt, {placeholder} là où va le prompt ; les options fixent celles du style ; {clear} le supprime.',
  // Private results and member defaults
  'refusal.private_not_allowed':
    '{scope, select, workspace {Cet espace de travail} other {Ce serveur}} n’autorise pas les résultats privés{fromDefault, select, yes {, et votre réglage par défaut les demande : demandez-en un public avec {platform, select, slack {--public} other {private: False}}, ou désactivez votre réglage avec {platform, select, slack {/imagine settings --private off} other {/imagine-settings private: False}}} other { ; réessayez sans {platform, select, slack {--private} other {private}}}}.',
  'settings.hint.onOff': '{on} ou {off}',
  'member.ignored':
    'Non utilisé ici, car les règles de {scope, select, workspace {cet espace de travail} other {ce serveur}} ne {count, plural, one {l’autorisent} other {les autorisent}} pas : votre réglage par défaut {defaults}.',
  'member.title': '<b>Vos réglages par défaut</b> (partout où vous utilisez Pictor ; un réglage que les règles d’un {scope, select, workspace {espace de travail} other {serveur}} n’autorisent pas n’y est pas utilisé)',
  'member.none': 'Vous n’en avez défini aucun : les réglages par défaut de {scope, select, workspace {cet espace de travail} other {ce serveur}} s’appliquent.',
  'member.line': '• {name} : {value}{ignored, select, yes { — non autorisé ici, non utilisé} refused { — non autorisé ici : une tâche ici est refusée sauf si vous en demandez une publique} other {}}',
  'member.on_off': '{on, select, yes {activé} other {désactivé}}',
  'member.scope':
    '<b>{scope, select, workspace {Cet espace de travail} other {Ce serveur}}</b> (quand vous ne choisissez rien) : taille {size}, qualité {quality}, {previews, plural, =0 {aucun aperçu} one {# aperçu} other {# aperçus}} ; jusqu’à {maxImages, plural, one {# image} other {# images}} par tâche ; résultats privés {privateResults, select, yes {autorisés} other {non autorisés}}.',
  'member.how': 'Modifiez les vôtres avec {command} ; {clear} en efface un, ou tous.',
  'member.saved': 'Vos réglages par défaut sont enregistrés.',
  'discord.command.settings.name': 'imagine-settings',
  'discord.command.settings.description': 'Vos réglages : taille, qualité, format, nombre, privé, aperçus ; sans option, les affiche',
  'discord.option.private': 'Vous seul voyez la tâche et ses images (si ce serveur le permet)',
  'discord.option.default_private': 'Vos tâches ne sont montrées qu’à vous, sauf demande contraire',
  'discord.option.default_previews': 'Afficher des aperçus pendant que vos images sont dessinées',
  'discord.option.clear': 'Effacer un de vos réglages par défaut, ou tous',
  'discord.choice.clear': '{name, select, all {tous} other {{name}}}',
  'slack.job.private_in_dm': ':lock: Vous seul verrez cette tâche : je la dessine dans nos messages directs.',
  'slack.settings.on_off': '{flag} prend on ou off.',
  'slack.help.private': '<b>Rien que pour vous :</b> {private} ne montre la tâche qu’à vous, dans nos messages directs ; {public} la montre dans le canal quand votre réglage par défaut est privé.',
  'slack.help.settings': '<b>Vos réglages par défaut :</b> {command} (taille, qualité, format, nombre, privé, aperçus).',
} as const satisfies Catalog;
