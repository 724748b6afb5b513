import type { Catalog } from '../words.js';

/** Español. Tuteo, como es habitual en Discord y Slack; las palabras de los comandos, ajustes y opciones siguen en inglés (se escriben así). */
export const es = {
  'time.resets': '{at} (dentro de {wait})',
  'time.days': '{days, plural, one {# día} other {# días}}',

  'refusal.restarting': 'El bot se está reiniciando; inténtalo de nuevo dentro de un minuto.',
  'refusal.scope_not_allowed':
    'Este bot no está activado para {scope, select, workspace {este espacio de trabajo} other {este servidor}}: su operador no lo ha permitido aquí, así que no crea imágenes. Pide al operador del bot que añada {scope, select, workspace {este espacio de trabajo} other {este servidor}}.',
  'refusal.dms_not_enabled':
    'Este bot solo crea imágenes en los servidores a los que se añadió: su operador no ha activado los mensajes directos ni las instalaciones de usuario. Úsalo en uno de esos servidores.',
  'refusal.member_blocked':
    'Un admin de {scope, select, workspace {este espacio de trabajo} other {este servidor}} te ha bloqueado para crear imágenes aquí; pregúntale si crees que es un error.',
  'refusal.channel_not_allowed': 'No se pueden crear imágenes en este canal; usa {channels}.',
  'refusal.member_not_allowed':
    'Los admins de {scope, select, workspace {este espacio de trabajo} other {este servidor}} han elegido quién puede crear imágenes, y tú no estás entre ellos; pídeles acceso.',
  'refusal.blocked_word': 'Tu prompt contiene «{word}», que está bloqueado aquí; reformúlalo e inténtalo de nuevo.',
  'refusal.too_many_images': 'Aquí se pueden crear como máximo {limit} {limit, plural, one {imagen} other {imágenes}} por trabajo; pide menos.',
  'refusal.quality_not_allowed': 'Esa calidad no está permitida aquí; elige {allowed}.',
  'refusal.high_quality_not_allowed':
    'La calidad high está reservada a algunos miembros de {scope, select, workspace {este espacio de trabajo} other {este servidor}}; elige otra calidad o pregunta a un admin.',
  'refusal.size_not_allowed': 'Ese tamaño no está permitido aquí; elige {allowed}.',
  'refusal.moderation_not_allowed':
    'La moderación low no está permitida aquí; deja moderation sin indicar para usar el nivel de {scope, select, workspace {este espacio de trabajo} other {este servidor}}.',
  'refusal.user_concurrency':
    'Ya tienes {used} {used, plural, one {trabajo} other {trabajos}} en cola o en curso, el máximo permitido a la vez ({limit}); espera a que termine alguno o cancélalo.',
  'refusal.user_cooldown': 'Puedes iniciar un trabajo cada {every}; inténtalo de nuevo dentro de {wait}.',
  'refusal.scope_paused':
    '{scope, select, workspace {Este espacio de trabajo está en pausa} dm {Tu uso del bot fuera de los servidores está en pausa} other {Este servidor está en pausa}}: gastó {used} en la última hora, más de los {limit} por hora que permite su uso habitual. No se aceptan trabajos nuevos hasta que el operador del bot (quien paga su clave de API) lo reanude desde la consola de Pictor.',
  'refusal.budget_reached':
    '{owner, select, user {Has alcanzado tu presupuesto} scope {{scope, select, workspace {Este espacio de trabajo ha alcanzado su presupuesto} dm {Tu uso del bot fuera de los servidores ha alcanzado su presupuesto} other {Este servidor ha alcanzado su presupuesto}}} other {La cuenta entera (todos los servidores, espacios de trabajo y herramientas que comparten esta clave de API) ha alcanzado su presupuesto}} {period, select, day {diario} other {mensual}} de {limit} (gastado: {used}, quedan {left}); se restablece a las {reset}.',
  'refusal.budget_would_pass':
    'Este trabajo podría costar hasta {estimate}, más de los {left} que quedan {owner, select, user {de tu presupuesto} scope {{scope, select, workspace {del presupuesto de este espacio de trabajo} dm {de tu presupuesto fuera de los servidores} other {del presupuesto de este servidor}}} other {del presupuesto de la cuenta entera}} {period, select, day {diario} other {mensual}} de {limit} (gastado: {used}); quizá quepan menos imágenes o más baratas, y el presupuesto se restablece a las {reset}.',
  'refusal.other_limit': 'Este trabajo fue rechazado por el límite {code}.',
  'refusal.queue_full':
    'El bot está ocupado: hay {queued} trabajos esperando, el máximo que pone en cola a la vez ({max}), así que este no se inició y no cuesta nada; {known, select, yes {al ritmo actual un trabajo nuevo esperaría unos {wait}, así que inténtalo entonces.} other {no se ha enviado ninguno en el último minuto, así que inténtalo dentro de unos minutos.}}',
  'refusal.queue_full_images':
    'El bot está ocupado: las ediciones en espera ocupan {held} de imágenes, y los {job} de esta superarían el máximo que guarda a la vez ({max}), así que no se inició y no cuesta nada; {known, select, yes {al ritmo actual un trabajo nuevo esperaría unos {wait}, así que inténtalo entonces.} other {no se ha enviado ninguno en el último minuto, así que inténtalo dentro de unos minutos.}}',
  'refusal.input_too_large':
    'Las imágenes de esta edición suman {job}, más de lo que este bot acepta a la vez ({max}), así que no se inició y no cuesta nada; usa menos imágenes o más pequeñas.',

  'failure.internal_error': 'Algo salió mal dentro del bot; inténtalo de nuevo y avisa al operador del bot si sigue pasando.',
  'failure.validation':
    '{subject, select, prompt {El prompt no es válido} image {Una imagen de entrada no es válida} other {La opción {option} no es válida}}: {detail}{allowed, select, some { (permitido: {values})} other {}}.',
  'failure.moderation_blocked': 'El servicio de imágenes rechazó esta solicitud por su política de contenido; cambia el prompt (o las imágenes) e inténtalo de nuevo.',
  'failure.rate_limited': 'El servicio de imágenes está ocupado ahora mismo; inténtalo de nuevo dentro de {known, select, yes {unos {wait}} other {un minuto aproximadamente}}.',
  'failure.quota_exhausted': 'La cuenta del servicio de imágenes se ha quedado sin crédito; avisa al operador del bot.',
  'failure.authentication_failed': 'El servicio de imágenes no aceptó la clave de API del bot; avisa al operador del bot.',
  'failure.permission_denied': 'El servicio de imágenes no permite a la cuenta del bot usar este modelo; avisa al operador del bot.',
  'failure.not_found': 'El bot está configurado con una dirección del servicio de imágenes incorrecta; avisa al operador del bot.',
  'failure.bad_request_option': 'El servicio de imágenes rechazó la opción {option}; cámbiala e inténtalo de nuevo.',
  'failure.bad_request': 'El servicio de imágenes rechazó la solicitud; revisa las opciones y las imágenes e inténtalo de nuevo.',
  'failure.server_error':
    '{kind, select, stream {El servicio de imágenes informó de un error mientras creaba las imágenes} overloaded {El servicio de imágenes está sobrecargado y no respondió tras varios intentos} other {El servicio de imágenes tuvo un error interno y no se recuperó tras varios intentos}}; inténtalo de nuevo {known, select, yes {dentro de unos {wait}} other {dentro de unos minutos}}.',
  'failure.api_error': 'El servicio de imágenes respondió con un error inesperado; inténtalo de nuevo dentro de unos minutos.',
  'failure.connection_failed': 'El bot no pudo conectar con el servicio de imágenes; inténtalo de nuevo dentro de unos minutos.',
  'failure.timeout':
    '{kind, select, idle {El servicio de imágenes no envió nada durante {howLong}, así que el trabajo se detuvo.} other {El trabajo tardó más de {howLong}, así que se detuvo.}} Había llegado al servicio y puede que se haya cobrado (su estimación cuenta para el presupuesto), así que no se volvió a enviar; Reintentar inicia un trabajo nuevo, quizá con una calidad más baja.',
  'failure.stream_broken':
    'La conexión con el servicio de imágenes se cortó después de que llegara la solicitud, antes de recibir todas las imágenes. Puede que se haya cobrado (la estimación de cada imagen que falta cuenta para el presupuesto), así que no se volvió a enviar; Reintentar inicia un trabajo nuevo.',
  'failure.aborted': 'El trabajo se detuvo antes de terminar; inténtalo de nuevo.',
  'failure.bad_response': 'El servicio de imágenes respondió con algo que no son las imágenes pedidas; puede que se haya cobrado, así que no se volvió a enviar.',

  'job.queue_trouble': 'La cola compartida no está disponible por un momento, así que esto tarda más de lo habitual; tu trabajo conserva su puesto y no se cobra nada hasta que se ejecute.',
  'job.kept_images': '{count, plural, one {La imagen que terminó antes de eso está aquí; se cobra.} other {Las # imágenes que terminaron antes de eso están aquí; se cobran.}}',

  'usage.your_spend': '<b>Tu gasto</b> (UTC): {today} hoy · {month} este mes',
  'usage.no_budget': 'No se te aplica ningún presupuesto: el operador del bot no fijó ninguno.',
  'usage.budgets': '<b>Presupuestos</b>',
  'usage.cap':
    '• {whose, select, user {Tu presupuesto} account {El presupuesto de la cuenta entera} other {{scope, select, dm {Tu presupuesto fuera de los servidores} workspace {El presupuesto de este espacio de trabajo} other {El presupuesto de este servidor}}}} {period, select, day {diario} other {mensual}}{setBy, select, chat { (fijado por un admin)} other {}}: quedan {left} de {limit} (gastado: {spent}); se restablece a las {reset}',
  'usage.scope_spend': '<b>{scope, select, workspace {Este espacio de trabajo} other {Este servidor}}</b> (UTC): {today} hoy · {month} este mes',
  'usage.no_jobs_yet': 'Todavía no hay trabajos terminados este mes.',
  'usage.top_users': 'Usuarios que más gastan este mes:',
  'usage.top_user': '{rank}. {user} {usd} ({jobs} {jobs, plural, one {trabajo} other {trabajos}})',

  'budget.amount_hint': 'Indica el presupuesto en dólares estadounidenses, 0 o más (p. ej., 2.50), o clear para volver al ajuste del operador.',
  'budget.not_admin': 'Solo un admin de {scope, select, workspace {este espacio de trabajo} other {este servidor}} puede cambiar sus presupuestos.',
  'budget.above_operator_cap':
    'El operador del bot limita {whose, select, user {el presupuesto {period, select, day {diario} other {mensual}} de cada usuario} other {el presupuesto {period, select, day {diario} other {mensual}} de {scope, select, workspace {este espacio de trabajo} other {este servidor}}}} a {operator} ({variable}); un admin puede bajarlo, no subirlo. Pide al operador que lo suba.',
  'budget.cleared':
    '{whose, select, user {El presupuesto {period, select, day {diario} other {mensual}} de cada usuario} other {El presupuesto {period, select, day {diario} other {mensual}} de {scope, select, workspace {este espacio de trabajo} other {este servidor}}}} vuelve al ajuste del operador ({operatorSet, select, yes {{operator}} other {sin límite}}).',
  'budget.set':
    '{whose, select, user {El presupuesto {period, select, day {diario} other {mensual}} de cada usuario} other {El presupuesto {period, select, day {diario} other {mensual}} de {scope, select, workspace {este espacio de trabajo} other {este servidor}}}} es ahora de {usd} para {scope, select, workspace {este espacio de trabajo} other {este servidor}} (límite del operador: {operatorSet, select, yes {{operator}} other {ninguno}}).',

  'settings.not_admin': 'Solo un admin de {scope, select, workspace {este espacio de trabajo} other {este servidor}} puede cambiar sus ajustes.',
  'settings.unknown': 'Elige uno de {names}.',
  'settings.takes': '{setting} admite {hint}.',
  'settings.changed': '{setting} es ahora {value} (antes: {wasDefault, select, yes {el valor predeterminado} other {{was}}}).',
  'settings.cleared': '{setting} vuelve a su valor predeterminado (antes: {wasDefault, select, yes {el valor predeterminado} other {{was}}}).',
  'settings.at_most': 'como máximo {max}',
  'settings.beyond_operator': 'El operador del bot permite {allowed} para {setting}; un admin puede elegir dentro de eso, no más allá. Pide al operador que lo cambie.',
  'settings.title':
    'Ajustes de {scope, select, workspace {este espacio de trabajo} other {este servidor}}: de dónde viene cada uno: operador (el entorno del bot), admin (fijado aquí), predeterminado.',
  'settings.allowed_here':
    '• bot permitido aquí: {allowed, select, yes {sí} other {no — el operador no ha permitido {scope, select, workspace {este espacio de trabajo} other {este servidor}}, así que se rechaza cada trabajo}} (operador)',
  'settings.line': '• {setting}: {value} ({source})',
  'settings.operator_words': '• palabras bloqueadas por el operador (en todas partes): {words} (operador)',
  'settings.source': '{source, select, operator {operador} admin {admin} other {predeterminado}}',
  'settings.source_admin': 'admin: {who}, {when}',
  'settings.how_to_change': 'Cambia uno con {command} (clear para el predeterminado; add o remove para las listas).',
  'settings.empty.channels': 'todos los canales',
  'settings.empty.allowed': 'todos',
  'settings.empty.blocked': 'nadie',
  'settings.empty.none': 'ninguna',
  'settings.empty.highQualityFor': 'quien pueda usarla',
  'settings.hint.channels': 'menciones de canales (#art #memes); clear para todos los canales',
  'settings.hint.allowed': 'menciones de usuarios o roles (@artists @sam); clear para todos',
  'settings.hint.blocked': 'menciones de usuarios (@sam)',
  'settings.hint.blockedWords': 'palabras o frases separadas por comas (gore, red fox)',
  'settings.hint.highQualityFor': 'menciones de usuarios o roles que pueden usar la calidad high; clear para todos los que pueden usarla',
  'settings.hint.someOf': 'uno o varios de {values}',
  'settings.hint.oneOf': 'uno de {values}',
  'settings.hint.moderation': '{low} o {auto}',
  'settings.hint.number': 'un número entero de {min} a {max}',

  'button.cancel': 'Cancelar',
  'button.retry': 'Reintentar',
  'button.reroll': 'Regenerar',
  'button.delete': 'Eliminar',
  'button.edit': 'Editar',
  'button.edit_image': '{images, plural, one {Editar} other {Editar {index}}}',

  'discord.job.getting_ready': '⏳ Preparando…',
  'discord.job.queued': '{ahead, plural, =0 {⏳ Eres el siguiente…} one {⏳ En cola: # trabajo por delante del tuyo.} other {⏳ En cola: # trabajos por delante del tuyo.}}',
  'discord.job.drawing': '🎨 {n, plural, one {{kind, select, edit {Creando la edición} other {Dibujando la imagen}}} other {Dibujando # imágenes}}…',
  'discord.job.preview': '🎨 Dibujando… vista previa {preview}{n, plural, one {} other { (imagen {image} de {n})}}',
  'discord.job.cost': '{basis, select, table {{usd}} other {hasta {usd} (estimado)}}',
  'discord.job.elapsed': '{time}',
  'discord.job.restarted_before_done': '🔌 El bot se reinició antes de terminar esto; pulsa Reintentar para ejecutarlo de nuevo.',
  'discord.job.cancelled_by': '✖️ Cancelado por {user}.',
  'discord.job.interrupted': '🔌 Este trabajo se detuvo al reiniciarse el bot; pulsa Reintentar para ejecutarlo de nuevo.',
  'discord.job.too_large_to_upload': '{images, plural, one {La imagen} other {La imagen {index}}} es demasiado grande para subirla aquí (límite de {limit} por archivo), incluso recodificada.',
  'discord.job.reencoded':
    '{images, plural, one {La imagen} other {La imagen {index}}} se recodificó como {format}{shrunk, select, yes { y se redujo al {percent} %} other {}} para caber en el límite de subida de este servidor de {limit} por archivo.',
  'discord.job.more_images': 'Más imágenes ({from}–{to} de {of})',
  'discord.job.upload_separately': 'Las imágenes eran demasiado grandes para subirlas juntas aquí; siguen en mensajes separados.',

  'history.none_kept': '{icon} Este bot no guarda historial.',
  'history.erased': '{icon} Se borró tu historial ({count} {count, plural, one {trabajo} other {trabajos}}). Las imágenes ya publicadas se quedan en sus canales.',
  'history.not_admin': '{icon} Solo un admin de {scope, select, workspace {este espacio de trabajo} other {este servidor}} puede ver su historial.',
  'history.title': '{whose, select, scope {<b>Imágenes recientes de {scope, select, workspace {este espacio de trabajo} other {este servidor}}</b>} other {<b>Tus últimas imágenes</b> (solo tú ves esto)}}',
  'history.empty': 'Todavía nada.',
  'history.reroll_numbered': 'Regenerar {index}',
  'discord.history.line':
    '{rank}. {when}{author} «{prompt}» · {n} × {size, select, default {tamaño predeterminado} other {{size}}}, {quality, select, default {calidad predeterminada} other {{quality}}} · {costKnown, select, yes {{cost}} other {{status, select, completed {terminado} failed {fallido} other {cancelado}}}}{hasLink, select, yes { · [mensaje]({link})} other {}}',

  'discord.settings.not_admin': '✋ Solo un admin de este servidor puede ver y cambiar sus ajustes.',
  'discord.unknown_interaction': 'No conozco ese comando o botón (puede que sea de una versión anterior de mí).',
  'discord.button.too_old': 'Este trabajo es demasiado antiguo: ya no guardo lo que necesita. Inicia uno nuevo con /imagine o /edit.',
  'discord.button.unknown': 'Ese botón ya no hace nada.',
  'discord.button.finished': 'Este trabajo ya terminó.',
  'discord.button.too_late_to_cancel': 'Este trabajo está a punto de terminar y ya no se puede cancelar.',
  'discord.button.only_requester': 'Solo {user} o un admin puede {action, select, delete {eliminar este mensaje} other {cancelar este trabajo}}.',
  'discord.button.runs_elsewhere': 'Otra instancia del bot, a la que no se pudo llegar, está dibujando este trabajo: mostrará su resultado cuando termine.',
  'discord.edit.title_result': '{images, plural, one {Editar imagen} other {Editar imagen {index}}}',
  'discord.edit.title_message': '{images, plural, one {Editar imagen} other {Editar # imágenes}}',
  'discord.edit.form_expired': 'Este formulario de edición es demasiado antiguo: ya no tengo sus imágenes. Vuelve a usar «Editar imagen» en el mensaje.',
  'discord.edit.image_gone': 'Esa imagen ya no se guarda; edita una más reciente o usa /edit con el archivo.',
  'discord.edit.placeholder': 'p. ej., hazlo de noche, con luna llena',
  'discord.edit.message_image': '{images, plural, one {la imagen de ese mensaje} other {la imagen {index} de ese mensaje}}',
  'discord.edit.message_has_no_images': 'Ese mensaje no tiene imágenes para editar (adjuntos PNG, JPEG o WebP).',
  'discord.edit.message_has_too_many': 'Una edición admite como máximo {max} imágenes, y ese mensaje tiene {count}.',
  'discord.edit.message_links_elsewhere': 'Solo edito imágenes subidas a Discord, y ese mensaje enlaza imágenes de otro sitio.',
  'discord.input.no_images': 'No hay ninguna imagen para editar: adjunta una imagen PNG, JPEG o WebP.',
  'discord.input.too_many': 'Una edición admite como máximo {max} imágenes, y hay {count}.',
  'discord.input.host_not_allowed': 'Solo descargo imágenes subidas a Discord, y {label} no está alojada allí; sube el archivo directamente.',
  'discord.input.too_large': '{label} ({file}) ocupa {size}; cada imagen debe ocupar menos de {max}.',
  'discord.input.too_large_read': '{label} ({file}) es demasiado grande; {why, select, limit {cada imagen debe ocupar menos de {max}} other {es más grande de lo que dijo Discord; adjúntala de nuevo}}.',
  'discord.input.download_failed': 'No pude descargar {label} ({file}) de Discord; puede que su enlace haya caducado, así que adjúntala de nuevo.',
  'discord.input.not_an_image': '{label} ({file}) no es una imagen PNG, JPEG ni WebP.',

  'edit.what_should_change': '¿Qué debería cambiar?',
  'error.on_my_side': 'Algo salió mal por mi parte; inténtalo de nuevo en un momento.',

  'discord.command.imagine.name': 'imaginar',
  'discord.command.imagine.description': 'Dibujar imágenes a partir de una descripción',
  'discord.command.edit.name': 'editar',
  'discord.command.edit.description': 'Editar o combinar imágenes con una descripción',
  'discord.command.edit_image.name': 'Editar imagen',
  'discord.command.usage.name': 'imaginar-uso',
  'discord.command.usage.description': 'Lo que has gastado hoy y este mes, y lo que queda de tus presupuestos',
  'discord.command.history.name': 'imaginar-historial',
  'discord.command.history.description': 'Tus 10 últimas imágenes, en privado; los admins ven las del servidor; forget borra las tuyas',
  'discord.command.admin.name': 'imaginar-admin',
  'discord.command.admin.description': 'Admins del servidor: cambiar los presupuestos y reglas de imágenes de este servidor',
  'discord.command.admin.budget': 'Fijar un presupuesto del servidor, hasta el límite del operador; clear vuelve a su ajuste',
  'discord.command.admin.settings': 'Mostrar cada ajuste de este servidor y de dónde viene (operador o admin)',
  'discord.command.admin.set': 'Cambiar un ajuste de este servidor, dentro de lo que permite el operador',
  'discord.option.prompt_imagine': 'Qué dibujar',
  'discord.option.prompt_edit': 'Qué cambiar',
  'discord.option.image': '{first, select, yes {La imagen que editar (PNG, JPEG o WebP)} other {Otra imagen (PNG, JPEG o WebP)}}',
  'discord.option.size': 'Ancho x alto del resultado',
  'discord.option.quality': 'Más calidad cuesta más y tarda más',
  'discord.option.background': 'transparent requiere el formato {formats}',
  'discord.option.format': 'Formato de archivo del resultado',
  'discord.option.count': 'Cuántas imágenes',
  'discord.option.show': 'Qué historial (predeterminado: el tuyo)',
  'discord.option.cap': 'Qué presupuesto',
  'discord.option.usd': 'Dólares estadounidenses, 0 o más (p. ej., 2.50), o clear para el ajuste del operador',
  'discord.option.setting': 'Qué ajuste',
  'discord.option.value': '#canales, @roles/@miembros, palabras, un número…; clear: predeterminado; add …/remove …: listas',
  'discord.choice.size': '{size} {shape, select, square {cuadrada} landscape {horizontal} other {vertical}}{isDefault, select, yes { (predeterminado)} other {}}',
  'discord.choice.quality': '{quality, select, auto {auto (elige el servicio)} other {{quality}}}{isDefault, select, yes { (predeterminado)} other {}}',
  'discord.choice.background': '{background, select, transparent {transparent (requiere el formato {formats})} other {{background}}}{isDefault, select, yes { (predeterminado)} other {}}',
  'discord.choice.format': '{transparent, select, yes {{format}} other {{format} (sin transparencia)}}{isDefault, select, yes { (predeterminado)} other {}}',
  'discord.choice.show': '{show, select, mine {el mío} server {servidor (admins)} other {borrar el mío}}',

  'button.try_again': 'Reintentar',
  'slack.job.header': '{user} {kind, select, edit {pidió editar {inputs, plural, one {una imagen} other {# imágenes}}} other {pidió}}: {prompt}',
  'slack.job.text': 'Pictor: {status}',
  'slack.job.plain_status':
    '{stage, select, queued {{ahead, plural, =0 {en cola} other {en cola, # por delante}}} running {dibujando…} posting {creado ({summary}), publicando las imágenes} done {terminado ({summary})} not_posted {creado, pero no se pudieron publicar las imágenes} failed {falló: {failure}} other {cancelado}}',
  'slack.job.actions_text': 'Regenerar, Editar o Eliminar: {prompt}',
  'slack.job.finished_where':
    '{where, select, posting {Ese trabajo ya terminó: sus imágenes se están publicando, con Regenerar, Editar y Eliminar justo después.} dm {Ese trabajo ya terminó: sus imágenes y sus botones Regenerar, Editar y Eliminar se enviaron por mensaje directo a quien lo pidió.} link {Ese trabajo ya terminó: sus imágenes y sus botones Regenerar, Editar y Eliminar están <{link}|aquí>.} other {Ese trabajo ya terminó: sus imágenes están publicadas después de su mensaje, con sus botones Regenerar, Editar y Eliminar.}}',
  'slack.job.caption': '{user} {images, plural, one {aquí tienes tu imagen} other {aquí tienes tus # imágenes}}: {prompt}\n{summary}',
  'slack.job.cost': '{basis, select, table {{usd}} other {hasta {usd} (estimado)}}',
  'slack.job.elapsed': '{time}',
  'slack.job.queued': '{ahead, plural, =0 {:hourglass_flowing_sand: En cola, eres el siguiente} other {:hourglass_flowing_sand: En cola, # por delante}}',
  'slack.job.drawing': '{previews, plural, =0 {:art: Dibujando…} other {:art: Dibujando… la vista previa # está en el hilo}}',
  'slack.job.posting': ':outbox_tray: Creado ({summary}); publicando {images, plural, one {la imagen} other {las # imágenes}}…',
  'slack.job.done':
    ':white_check_mark: Listo · {summary} · {images, plural, one {la imagen está} other {# imágenes están}} {where, select, dm {en tus mensajes directos conmigo} channel {aquí abajo} other {en el hilo}}{actionsBeside, select, yes {, con Regenerar, Editar y Eliminar} other {}}',
  'slack.job.not_posted': ':warning: {images, plural, one {La imagen se creó} other {Las imágenes se crearon}} ({summary}) pero no se pudieron publicar en Slack; pulsa Regenerar para intentarlo de nuevo.',
  'slack.job.failed': 'El trabajo falló.',
  'slack.job.restarted': ':no_entry_sign: Se detuvo porque el bot se reinició; pulsa Regenerar para ejecutarlo de nuevo.',
  'slack.job.cancelled_by': ':no_entry_sign: Cancelado por {user}',
  'slack.job.preview': 'Vista previa {preview}{images, plural, one {} other { de la imagen {image}}}',
  'slack.job.image': 'Imagen {index}',
  'slack.job.kept_images': '{user} {kept}',
  'slack.job.not_in_channel': 'No puedo publicar en esta conversación, así que no inicié tu trabajo. Invítame con `/invite @Pictor` (o úsame en un canal en el que esté) e inténtalo de nuevo.',
  'slack.job.not_posted_at_all': 'No pude publicar el mensaje de tu trabajo en Slack, así que no lo inicié; inténtalo de nuevo en un momento.',

  'slack.input.no_images': 'Aquí no hay ninguna imagen PNG, JPEG o WebP para editar; adjunta una (o usa `/imagine` para crear una imagen nueva).',
  'slack.input.too_many': 'Son {count} imágenes; una edición admite como máximo {max}.',
  'slack.input.too_large': '{named, select, yes {{name}} other {{what, select, image {Una imagen} other {Un archivo}}}} ocupa {size}; cada imagen debe ocupar menos de {max}.',
  'slack.input.wrong_type': '{named, select, yes {{name}} other {{what, select, image {Una imagen} other {Un archivo}}}} es {type}; puedo editar imágenes PNG, JPEG y WebP.',
  'slack.input.gone': '{named, select, yes {{name}} other {{what, select, image {Una imagen} other {Un archivo}}}} ya no está disponible en Slack.',
  'slack.input.host_not_allowed':
    '{named, select, yes {{name}} other {{what, select, image {Una imagen} other {Un archivo}}}} está guardado en {host}, que no es uno de los servidores de archivos de Slack, así que no lo descargué.',
  'slack.input.download_failed':
    '{named, select, yes {{name}} other {{what, select, image {Una imagen} other {Un archivo}}}} no se pudo descargar de Slack{reason, select, redirects { (demasiadas redirecciones)} status { (estado {status})} other {}}; inténtalo de nuevo.',
  'slack.input.sign_in_page': 'Slack respondió con una página de inicio de sesión en lugar de {named, select, yes {{name}} other {el archivo}}: la app necesita el permiso files:read (reinstálala desde su manifiesto).',
  'slack.input.not_an_image': '{named, select, yes {{name}} other {{what, select, image {Una imagen} other {Un archivo}}}} no es una imagen PNG, JPEG ni WebP (comprobado por su contenido).',
  'slack.input.no_address': '{named, select, yes {{name}} other {{what, select, image {Una imagen} other {Un archivo}}}} no tiene una dirección desde la que pueda descargarlo.',
  'slack.input.larger_than_said': '{named, select, yes {{name}} other {{what, select, image {Una imagen} other {Un archivo}}}} es más grande de lo que dijo Slack; súbelo de nuevo.',

  'slack.imagine.example': '{command} un faro al anochecer, acuarela --size 1536x1024',
  'slack.imagine.missing_prompt': 'Di qué dibujar, por ejemplo {example}.',
  'slack.flag.unknown': '{flag} no es una opción.{meant, select, yes { ¿Quisiste decir {near}?} other {}} Las opciones son {flags}.',
  'slack.flag.needs_value': '{flag} necesita un valor: {allowed}.',
  'slack.flag.bad_value': '{given} no está permitido: {flag} admite {allowed}.',
  'slack.flag.also': '{base}; también {aliases}',
  'slack.flag.help':
    '{flag, select, size {ancho x alto} quality {detalle, tiempo y precio} background {transparent requiere png o webp} format {tipo de archivo} n {cuántas imágenes} compression {para jpeg y webp} other {lo estricto que es el filtro de contenido}}',
  'slack.help.flag': '• {flag} {allowed}{hasDefault, select, yes { (predeterminado {fallback})} other {}}: {help}',
  'slack.help.make': '<b>Crear imágenes:</b> {example}',
  'slack.help.flags': 'Las opciones van en cualquier parte del texto:',
  'slack.help.edit':
    '<b>Editar imágenes:</b> elige <b>Edit image</b> en el menú ⋯ de un mensaje con imágenes, ejecuta {command} para subir hasta 10, o mencióname en un mensaje (o un hilo) con imágenes: _@Pictor pon el cielo morado_.',
  'slack.help.progress': 'El progreso aparece en el mensaje que publico; las imágenes llegan a su hilo, con los botones <b>Regenerar</b> y <b>Editar</b>.',
  'slack.help.usage': '<b>Lo que has gastado:</b> {command} (hoy, este mes, lo que queda de tus presupuestos).',
  'slack.help.admins': '<b>Admins del bot:</b> {command} (user-daily, user-monthly, workspace-daily, workspace-monthly; `clear` para el ajuste del operador).',

  'slack.edit.title': 'Editar imagen',
  'slack.edit.editing': 'Editando {count, plural, one {1 imagen} other {# imágenes}}: {names}',
  'slack.edit.files': 'Imágenes (hasta {max})',
  'slack.edit.placeholder': 'pon el cielo morado',
  'slack.edit.label': '{field, select, size {Tamaño} quality {Calidad} background {Fondo} format {Formato} other {Imágenes}}',
  'slack.edit.out_of_date': 'Este formulario está desactualizado; ciérralo y vuelve a empezar la edición.',
  'slack.edit.say_what': 'Di qué debería cambiar.',
  'slack.edit.pick_one': 'Elige uno de {values}.',
  'slack.edit.only_images': 'Solo se pueden editar imágenes PNG, JPEG y WebP.',
  'slack.edit.could_not_open': 'No pude abrir el formulario de edición; inténtalo de nuevo.',
  'slack.button.not_running': 'Ese trabajo ya no está en curso.',
  'slack.button.only_requester_cancel': 'Solo la persona que inició este trabajo, o un admin, puede cancelarlo.',
  'slack.button.gone_reroll': 'Ya no tengo los detalles de ese trabajo; inicia uno nuevo con {command}.',
  'slack.button.gone_delete': 'Ya no tengo los detalles de ese trabajo; elimina su mensaje desde el menú de Slack.',
  'slack.button.only_requester_delete': 'Solo {user} o un admin puede eliminar este mensaje.',
  'slack.button.could_not_delete': 'No pude eliminar ese mensaje; inténtalo de nuevo.',
  'slack.button.gone_edit': 'Ya no tengo las imágenes de ese trabajo; usa en su lugar el atajo *Edit image* sobre las imágenes.',
  'slack.mention.example': '@Pictor pon el cielo morado --size 1536x1024',
  'slack.settings.not_admin': ':raised_hand: Solo un admin de este espacio de trabajo puede ver y cambiar sus ajustes.',
  'slack.settings.usage': 'Escribe {how}: SETTING es uno de {names}; {show} los muestra todos.',
  'slack.budget.usage':
    'Escribe {how}: CAP es user-daily, user-monthly, workspace-daily o workspace-monthly; USD es 0 o más (p. ej., 2.50), o `clear` para el ajuste del operador.',
  'slack.history.line':
    '{rank}. {when}{author} en {channel} «{prompt}» · {n} × {size, select, default {tamaño predeterminado} other {{size}}}, {quality, select, default {calidad predeterminada} other {{quality}}} · {costKnown, select, yes {{cost}} other {{status, select, completed {terminado} failed {fallido} other {cancelado}}}}{hasLink, select, yes { · <{link}|mensaje>} other {}}',
  'slack.home.usage_header': 'Tu gasto y tus presupuestos',
  'slack.home.history_header': 'Tus imágenes recientes',
  'slack.home.history_empty': 'Todavía nada: crea tu primera imagen con {command} en cualquier canal.',
  'slack.home.thumbnail': 'La imagen de «{prompt}»',
  'slack.home.defaults_header': 'Lo que obtienes si no eliges nada',
  'slack.home.defaults':
    'Tamaño {size}, calidad {quality}, {previews, plural, =0 {sin vistas previas} one {# vista previa} other {# vistas previas}} mientras dibuja. Aquí puedes pedir hasta {maxImages} {maxImages, plural, one {imagen} other {imágenes}} por trabajo, en calidad {qualities} y tamaño {sizes}.',
  'slack.home.admin_header': 'Este espacio de trabajo (solo admins)',
  'slack.home.how': 'Crea imágenes con {command} en cualquier canal, edítalas con *Edit image* en el menú ⋯ de un mensaje o mencióname. Solo tú ves esta página.',
  'slack.step.bad_inputs': 'El paso necesita un prompt, un canal y la persona para la que se ejecuta; el tamaño, la calidad y la cantidad deben ser valores que Pictor acepte.',
  'slack.step.cancelled': 'El trabajo de imagen se detuvo antes de terminar.',
  'slack.step.not_posted': 'Las imágenes se crearon, pero no se pudieron publicar en el canal.',

  // House styles, role budgets and the audit channel
  'budget.role_set':
    '{scope, select, workspace {Los miembros del grupo de usuarios {role}} other {Los miembros con el rol {role}}} tienen ahora {usd} cada uno {period, select, day {al día} other {al mes}}, en lugar del presupuesto de cada usuario; quien tenga varios recibe el más generoso (límite del operador por usuario: {operatorSet, select, yes {{operator}} other {ninguno}}).',
  'budget.role_cleared':
    '{scope, select, workspace {El grupo de usuarios {role}} other {El rol {role}}} ya no tiene presupuesto {period, select, day {diario} other {mensual}}: sus miembros vuelven al presupuesto de cada usuario, salvo que otro de sus {scope, select, workspace {grupos} other {roles}} tenga uno.',
  'budget.role_member_caps_only':
    'El presupuesto de un {scope, select, workspace {grupo de usuarios} other {rol}} es lo que puede gastar cada uno de sus miembros: usa user-daily o user-monthly.',
  'budget.too_many_roles':
    '{scope, select, workspace {Este espacio de trabajo} other {Este servidor}} ya tiene presupuestos para {max} {scope, select, workspace {grupos de usuarios} other {roles}}, el máximo; borra uno primero.',
  'usage.role_cap':
    '• Tu presupuesto {period, select, day {diario} other {mensual}}{setBy, select, role {, el de tu {scope, select, workspace {grupo de usuarios} other {rol}} {role}} other {}}: quedan {left} de {limit} (gastado: {spent}); se restablece a las {reset}{setBy, select, unknown_roles {. Ahora mismo no se pudieron leer tus {scope, select, workspace {grupos de usuarios} other {roles}}, así que se aplica el presupuesto más pequeño que podría ser el tuyo (el de {role}).} other {}}',
  'usage.role_budgets':
    '<b>Presupuestos de {scope, select, workspace {grupos de usuarios} other {roles}}</b> (cada miembro recibe el más generoso de los suyos, en lugar del presupuesto de cada usuario):',
  'usage.role_budget':
    '• {role}: {hasDaily, select, yes {{daily} al día} other {el presupuesto de cada usuario al día}} · {hasMonthly, select, yes {{monthly} al mes} other {el presupuesto de cada usuario al mes}}',
  'discord.option.role':
    'Un rol: sus miembros reciben este presupuesto en lugar del de cada usuario (user-daily/-monthly)',
  'slack.budget.group_usage':
    'Para un grupo de usuarios, escribe {how}: cada uno de sus miembros recibe ese presupuesto en lugar del de cada usuario.',
  'slack.budget.unknown_group':
    'No encuentro el grupo de usuarios {group} en este espacio de trabajo{missingScope, select, yes {: la app necesita el permiso usergroups:read (reinstálala desde su manifiesto)} other {}}.',
  'refusal.style_unknown':
    '{count, plural, =0 {Aquí aún no hay estilos de la casa, así que no se puede usar «{style}»; quita el estilo o pide a un admin que lo defina.} other {Aquí no hay ningún estilo de la casa «{style}»; elige uno de {styles}.}}',
  'refusal.style_option_not_allowed': 'El estilo de la casa «{style}» pide {option} {value}, que no está permitido aquí; elige {option} tú mismo, usa otro estilo o pide a un administrador que lo cambie.',
  'refusal.style_blocked_word': 'El estilo de la casa «{style}» añade «{word}», que está bloqueado aquí; elige otro estilo o pide a un admin que lo cambie.',
  'styles.title': '<b>Estilos de la casa</b> ({count} de {max} como máximo); los miembros eligen uno con {how}:',
  'styles.none': 'Aún no hay estilos de la casa; los admins definen uno con {command}.',
  'styles.line': '• {name}: «{text}»{hasOptions, select, yes { ({options})} other {}}',
  'styles.defined': 'Estilo de la casa {name} {replaced, select, yes {reemplazado} other {definido}}: «{text}»{hasOptions, select, yes { ({options})} other {}}. Los miembros lo eligen con {how}.',
  'styles.removed': 'Estilo de la casa {name} eliminado; un trabajo que lo nombre se rechaza.',
  'styles.unknown': 'Aquí no hay ningún estilo de la casa {name}.',
  'styles.invalid_name': 'El nombre de un estilo tiene de 1 a 32 letras minúsculas, dígitos, - o _ (p. ej. neon-poster); «{name}» no lo es.',
  'styles.invalid_text':
    'El texto de un estilo tiene como máximo {max} caracteres, con {placeholder} como mucho una vez, donde va el prompt del miembro (p. ej. «neon-lit, {placeholder}, synthwave palette»); el texto sin él va después del prompt.',
  'styles.too_many': '{scope, select, workspace {Este espacio de trabajo ya tiene} other {Este servidor ya tiene}} {max} estilos de la casa, el máximo; elimina uno primero.',
  'styles.not_admin': 'Solo un admin de {scope, select, workspace {este espacio de trabajo} other {este servidor}} puede definir estilos de la casa.',
  'styles.choice': '{name}: {text}',
  'styles.more': '… y {count} más.',
  'discord.command.admin.styles': 'Listar los estilos de la casa de este servidor',
  'discord.command.admin.style': 'Definir o reemplazar un estilo de la casa; text clear lo elimina',
  'discord.option.style': 'Un estilo de la casa de este servidor: texto alrededor de tu prompt y sus opciones',
  'discord.option.style_name': 'El nombre del estilo (letras minúsculas, dígitos, - o _)',
  'discord.option.style_text': 'Texto alrededor del prompt: antes {placeholder} después; o clear para eliminar el estilo',
  'slack.help.style': '<b>Estilos de la casa:</b> {flag} añade un estilo de este espacio de trabajo a tu prompt; {command} los lista.',
  'slack.flag.style_value': 'el nombre de uno de los estilos de la casa de este espacio de trabajo',
  'slack.styles.usage':
    'Escribe {how}: NAME son letras minúsculas, dígitos, - o _; TEXT va alrededor del prompt, {placeholder} donde va el prompt; los flags fijan las opciones del estilo; {clear} lo elimina.',
  // Private results and member defaults
  'refusal.private_not_allowed':
    '{scope, select, workspace {Este espacio de trabajo} other {Este servidor}} no permite resultados privados{fromDefault, select, yes {, y tu valor predeterminado los pide: pide uno público con {platform, select, slack {--public} other {private: False}} o desactiva tu valor predeterminado con {platform, select, slack {/imagine settings --private off} other {/imagine-settings private: False}}} other {; vuelve a pedirlo sin {platform, select, slack {--private} other {private}}}}.',
  'settings.hint.onOff': '{on} u {off}',
  'member.ignored':
    'No se usa aquí, porque las reglas de {scope, select, workspace {este espacio de trabajo} other {este servidor}} no {count, plural, one {lo permiten} other {los permiten}}: tu valor predeterminado {defaults}.',
  'member.title': '<b>Tus valores predeterminados</b> (donde uses Pictor; uno que las reglas de un {scope, select, workspace {espacio de trabajo} other {servidor}} no permiten no se usa allí)',
  'member.none': 'No has definido ninguno: se aplican los valores predeterminados de {scope, select, workspace {este espacio de trabajo} other {este servidor}}.',
  'member.line': '• {name}: {value}{ignored, select, yes { — no permitido aquí, no se usa} refused { — no permitido aquí: un trabajo aquí se rechaza salvo que pidas uno público} other {}}',
  'member.on_off': '{on, select, yes {activado} other {desactivado}}',
  'member.scope':
    '<b>{scope, select, workspace {Este espacio de trabajo} other {Este servidor}}</b> (si no eliges nada): tamaño {size}, calidad {quality}, {previews, plural, =0 {sin vistas previas} one {# vista previa} other {# vistas previas}}; hasta {maxImages, plural, one {# imagen} other {# imágenes}} por trabajo; resultados privados {privateResults, select, yes {permitidos} other {no permitidos}}.',
  'member.how': 'Cambia los tuyos con {command}; {clear} borra uno, o todos.',
  'member.saved': 'Tus valores predeterminados están guardados.',
  'discord.command.settings.name': 'imagine-settings',
  'discord.command.settings.description': 'Tus valores: tamaño, calidad, formato, cantidad, privado, vistas previas; sin opción, los muestra',
  'discord.option.private': 'Solo tú ves el trabajo y sus imágenes (si este servidor lo permite)',
  'discord.option.default_private': 'Tus trabajos solo se te muestran a ti, salvo que pidas otra cosa',
  'discord.option.default_previews': 'Mostrar vistas previas mientras se dibujan tus imágenes',
  'discord.option.clear': 'Borrar uno de tus valores predeterminados, o todos',
  'discord.choice.clear': '{name, select, all {todos} other {{name}}}',
  'slack.job.private_in_dm': ':lock: Solo tú verás este trabajo: lo estoy dibujando en nuestros mensajes directos.',
  'slack.settings.on_off': '{flag} acepta on u off.',
  'slack.help.private': '<b>Solo para ti:</b> {private} muestra el trabajo solo a ti, en nuestros mensajes directos; {public} lo muestra en el canal cuando tu valor predeterminado es privado.',
  'slack.help.settings': '<b>Tus valores predeterminados:</b> {command} (tamaño, calidad, formato, cantidad, privado, vistas previas).',
} as const satisfies Catalog;
