import type { Catalog } from '../words.js';

/** Português do Brasil. Tratamento por “você”; as palavras dos comandos, configurações e opções continuam em inglês (são digitadas assim). */
export const ptBR = {
  'time.resets': '{at} (em {wait})',
  'time.days': '{days, plural, one {# dia} other {# dias}}',

  'refusal.restarting': 'O bot está reiniciando; tente de novo em um minuto.',
  'refusal.scope_not_allowed':
    'Este bot não está ativado para {scope, select, workspace {este espaço de trabalho} other {este servidor}}: o operador dele não o permitiu aqui, então ele não cria imagens. Peça ao operador do bot para adicionar {scope, select, workspace {este espaço de trabalho} other {este servidor}}.',
  'refusal.dms_not_enabled':
    'Este bot só cria imagens nos servidores aos quais foi adicionado: o operador dele não ativou mensagens diretas nem instalações de usuário. Use-o em um desses servidores.',
  'refusal.member_blocked':
    'Um admin {scope, select, workspace {deste espaço de trabalho} other {deste servidor}} bloqueou você de criar imagens aqui; fale com um deles se achar que é um engano.',
  'refusal.channel_not_allowed': 'Não é possível criar imagens neste canal; use {channels}.',
  'refusal.member_not_allowed':
    'Os admins {scope, select, workspace {deste espaço de trabalho} other {deste servidor}} escolheram quem pode criar imagens, e você não está entre eles; peça acesso a um deles.',
  'refusal.blocked_word': 'Seu prompt contém “{word}”, que está bloqueado aqui; reformule e tente de novo.',
  'refusal.too_many_images': 'Aqui é possível criar no máximo {limit} {limit, plural, one {imagem} other {imagens}} por tarefa; peça menos.',
  'refusal.quality_not_allowed': 'Essa qualidade não é permitida aqui; escolha {allowed}.',
  'refusal.high_quality_not_allowed':
    'A qualidade high é reservada a alguns membros {scope, select, workspace {deste espaço de trabalho} other {deste servidor}}; escolha outra qualidade ou fale com um admin.',
  'refusal.size_not_allowed': 'Esse tamanho não é permitido aqui; escolha {allowed}.',
  'refusal.moderation_not_allowed':
    'A moderação low não é permitida aqui; deixe moderation em branco para usar o nível {scope, select, workspace {deste espaço de trabalho} other {deste servidor}}.',
  'refusal.user_concurrency':
    'Você já tem {used} {used, plural, one {tarefa} other {tarefas}} na fila ou em andamento, o máximo permitido ao mesmo tempo ({limit}); espere uma terminar ou cancele uma.',
  'refusal.user_cooldown': 'Você pode iniciar uma tarefa a cada {every}; tente de novo em {wait}.',
  'refusal.scope_paused':
    '{scope, select, workspace {Este espaço de trabalho está pausado} dm {Seu uso do bot fora dos servidores está pausado} other {Este servidor está pausado}}: gastou {used} na última hora, mais que os {limit} por hora que o uso habitual permite. Nenhuma tarefa nova é aceita até que o operador do bot (quem paga a chave de API) retome pelo console do Pictor.',
  'refusal.budget_reached':
    '{owner, select, user {Você atingiu seu orçamento} scope {{scope, select, workspace {Este espaço de trabalho atingiu o orçamento} dm {Seu uso do bot fora dos servidores atingiu o orçamento} other {Este servidor atingiu o orçamento}}} other {A conta inteira (todos os servidores, espaços de trabalho e ferramentas que usam esta chave de API) atingiu o orçamento}} {period, select, day {diário} other {mensal}} de {limit} (gasto: {used}, restam {left}); ele é zerado às {reset}.',
  'refusal.budget_would_pass':
    'Esta tarefa pode custar até {estimate}, mais que os {left} que restam {owner, select, user {do seu orçamento} scope {{scope, select, workspace {do orçamento deste espaço de trabalho} dm {do seu orçamento fora dos servidores} other {do orçamento deste servidor}}} other {do orçamento da conta inteira}} {period, select, day {diário} other {mensal}} de {limit} (gasto: {used}); menos imagens ou imagens mais baratas podem caber, e o orçamento é zerado às {reset}.',
  'refusal.other_limit': 'Esta tarefa foi recusada pelo limite {code}.',
  'refusal.queue_full':
    'O bot está ocupado: {queued} tarefas estão esperando, o máximo que ele enfileira de uma vez ({max}), então esta não foi iniciada e não custa nada; {known, select, yes {no ritmo atual, uma nova tarefa esperaria cerca de {wait}, então tente de novo nesse momento.} other {nenhuma foi enviada no último minuto, então tente de novo em alguns minutos.}}',
  'refusal.queue_full_images':
    'O bot está ocupado: as edições na espera ocupam {held} de imagens, e os {job} desta passariam do máximo que ele guarda de uma vez ({max}), então ela não foi iniciada e não custa nada; {known, select, yes {no ritmo atual, uma nova tarefa esperaria cerca de {wait}, então tente de novo nesse momento.} other {nenhuma foi enviada no último minuto, então tente de novo em alguns minutos.}}',
  'refusal.input_too_large':
    'As imagens desta edição somam {job}, mais do que este bot aceita de uma vez ({max}), então ela não foi iniciada e não custa nada; use menos imagens ou imagens menores.',

  'failure.internal_error': 'Algo deu errado dentro do bot; tente de novo e avise o operador do bot se continuar acontecendo.',
  'failure.validation':
    '{subject, select, prompt {O prompt não é válido} image {Uma imagem de entrada não é válida} other {A opção {option} não é válida}}: {detail}{allowed, select, some { (permitido: {values})} other {}}.',
  'failure.moderation_blocked': 'O serviço de imagens recusou este pedido pela política de conteúdo dele; mude o prompt (ou as imagens) e tente de novo.',
  'failure.rate_limited': 'O serviço de imagens está ocupado agora; tente de novo em {known, select, yes {cerca de {wait}} other {cerca de um minuto}}.',
  'failure.quota_exhausted': 'A conta do serviço de imagens está sem crédito; avise o operador do bot.',
  'failure.authentication_failed': 'O serviço de imagens não aceitou a chave de API do bot; avise o operador do bot.',
  'failure.permission_denied': 'O serviço de imagens não permite que a conta do bot use este modelo; avise o operador do bot.',
  'failure.not_found': 'O bot está configurado com um endereço errado do serviço de imagens; avise o operador do bot.',
  'failure.bad_request_option': 'O serviço de imagens recusou a opção {option}; mude-a e tente de novo.',
  'failure.bad_request': 'O serviço de imagens recusou o pedido; confira as opções e as imagens e tente de novo.',
  'failure.server_error':
    '{kind, select, stream {O serviço de imagens informou um erro enquanto criava as imagens} overloaded {O serviço de imagens está sobrecarregado e não respondeu após várias tentativas} other {O serviço de imagens teve um erro interno e não se recuperou após várias tentativas}}; tente de novo {known, select, yes {em cerca de {wait}} other {em alguns minutos}}.',
  'failure.api_error': 'O serviço de imagens respondeu com um erro inesperado; tente de novo em alguns minutos.',
  'failure.connection_failed': 'O bot não conseguiu acessar o serviço de imagens; tente de novo em alguns minutos.',
  'failure.timeout':
    '{kind, select, idle {O serviço de imagens não enviou nada por {howLong}, então a tarefa foi interrompida.} other {A tarefa levou mais de {howLong}, então foi interrompida.}} Ela tinha chegado ao serviço e pode ter sido cobrada (a estimativa dela conta no orçamento), então não foi enviada de novo; Tentar de novo inicia uma nova tarefa, talvez com qualidade menor.',
  'failure.stream_broken':
    'A conexão com o serviço de imagens caiu depois que o pedido chegou, antes de todas as imagens chegarem. Pode ter sido cobrado (a estimativa de cada imagem que faltou conta no orçamento), então não foi enviado de novo; Tentar de novo inicia uma nova tarefa.',
  'failure.aborted': 'A tarefa foi interrompida antes de terminar; tente de novo.',
  'failure.bad_response': 'O serviço de imagens respondeu com algo que não são as imagens pedidas; pode ter sido cobrado, então não foi enviado de novo.',

  'job.queue_trouble': 'A fila compartilhada está inacessível por um momento, então isto demora mais que o normal; sua tarefa mantém o lugar e nada é cobrado até ela rodar.',
  'job.kept_images': '{count, plural, one {A imagem que ficou pronta antes disso está aqui; ela é cobrada.} other {As # imagens que ficaram prontas antes disso estão aqui; elas são cobradas.}}',

  'usage.your_spend': '<b>Seus gastos</b> (UTC): {today} hoje · {month} este mês',
  'usage.no_budget': 'Nenhum orçamento se aplica a você: o operador do bot não definiu nenhum.',
  'usage.budgets': '<b>Orçamentos</b>',
  'usage.cap':
    '• {whose, select, user {Seu orçamento} account {O orçamento da conta inteira} other {{scope, select, dm {Seu orçamento fora dos servidores} workspace {O orçamento deste espaço de trabalho} other {O orçamento deste servidor}}}} {period, select, day {diário} other {mensal}}{setBy, select, chat { (definido por um admin)} other {}}: restam {left} de {limit} (gasto: {spent}); zera às {reset}',
  'usage.scope_spend': '<b>{scope, select, workspace {Este espaço de trabalho} other {Este servidor}}</b> (UTC): {today} hoje · {month} este mês',
  'usage.no_jobs_yet': 'Nenhuma tarefa concluída neste mês ainda.',
  'usage.top_users': 'Quem mais gastou neste mês:',
  'usage.top_user': '{rank}. {user} {usd} ({jobs} {jobs, plural, one {tarefa} other {tarefas}})',

  'budget.amount_hint': 'Informe o orçamento em dólares americanos, 0 ou mais (ex.: 2.50), ou clear para voltar à configuração do operador.',
  'budget.not_admin': 'Só um admin {scope, select, workspace {deste espaço de trabalho} other {deste servidor}} pode mudar os orçamentos dele.',
  'budget.above_operator_cap':
    'O operador do bot limita {whose, select, user {o orçamento {period, select, day {diário} other {mensal}} de cada usuário} other {o orçamento {period, select, day {diário} other {mensal}} {scope, select, workspace {deste espaço de trabalho} other {deste servidor}}}} a {operator} ({variable}); um admin pode reduzir, não aumentar. Peça ao operador para aumentá-lo.',
  'budget.cleared':
    '{whose, select, user {O orçamento {period, select, day {diário} other {mensal}} de cada usuário} other {O orçamento {period, select, day {diário} other {mensal}} {scope, select, workspace {deste espaço de trabalho} other {deste servidor}}}} voltou à configuração do operador ({operatorSet, select, yes {{operator}} other {sem limite}}).',
  'budget.set':
    '{whose, select, user {O orçamento {period, select, day {diário} other {mensal}} de cada usuário} other {O orçamento {period, select, day {diário} other {mensal}} {scope, select, workspace {deste espaço de trabalho} other {deste servidor}}}} agora é {usd} para {scope, select, workspace {este espaço de trabalho} other {este servidor}} (limite do operador: {operatorSet, select, yes {{operator}} other {nenhum}}).',

  'settings.not_admin': 'Só um admin {scope, select, workspace {deste espaço de trabalho} other {deste servidor}} pode mudar as configurações dele.',
  'settings.unknown': 'Escolha um de {names}.',
  'settings.takes': '{setting} aceita {hint}.',
  'settings.changed': '{setting} agora é {value} (antes: {wasDefault, select, yes {o padrão} other {{was}}}).',
  'settings.cleared': '{setting} voltou ao padrão (antes: {wasDefault, select, yes {o padrão} other {{was}}}).',
  'settings.at_most': 'no máximo {max}',
  'settings.beyond_operator': 'O operador do bot permite {allowed} para {setting}; um admin pode escolher dentro disso, não além. Peça ao operador para mudar.',
  'settings.title':
    'Configurações {scope, select, workspace {deste espaço de trabalho} other {deste servidor}} — de onde vem cada uma: operador (o ambiente do bot), admin (definida aqui), padrão.',
  'settings.allowed_here':
    '• bot permitido aqui: {allowed, select, yes {sim} other {não — o operador não permitiu {scope, select, workspace {este espaço de trabalho} other {este servidor}}, então toda tarefa é recusada}} (operador)',
  'settings.line': '• {setting}: {value} ({source})',
  'settings.operator_words': '• palavras bloqueadas pelo operador (em todo lugar): {words} (operador)',
  'settings.source': '{source, select, operator {operador} admin {admin} other {padrão}}',
  'settings.source_admin': 'admin: {who}, {when}',
  'settings.how_to_change': 'Mude uma com {command} (clear para o padrão; add ou remove para listas).',
  'settings.empty.channels': 'todos os canais',
  'settings.empty.allowed': 'todos',
  'settings.empty.blocked': 'ninguém',
  'settings.empty.none': 'nenhuma',
  'settings.empty.highQualityFor': 'quem puder usá-la',
  'settings.hint.channels': 'menções de canais (#art #memes); clear para todos os canais',
  'settings.hint.allowed': 'menções de usuários ou cargos (@artists @sam); clear para todos',
  'settings.hint.blocked': 'menções de usuários (@sam)',
  'settings.hint.blockedWords': 'palavras ou expressões separadas por vírgulas (gore, red fox)',
  'settings.hint.highQualityFor': 'menções de usuários ou cargos que podem usar a qualidade high; clear para todos que podem usá-la',
  'settings.hint.someOf': 'um ou mais de {values}',
  'settings.hint.oneOf': 'um de {values}',
  'settings.hint.moderation': '{low} ou {auto}',
  'settings.hint.number': 'um número inteiro de {min} a {max}',

  'button.cancel': 'Cancelar',
  'button.retry': 'Tentar de novo',
  'button.reroll': 'Gerar de novo',
  'button.delete': 'Excluir',
  'button.edit': 'Editar',
  'button.edit_image': '{images, plural, one {Editar} other {Editar {index}}}',

  'discord.job.getting_ready': '⏳ Preparando…',
  'discord.job.queued': '{ahead, plural, =0 {⏳ Você é o próximo…} one {⏳ Na fila: # tarefa à frente da sua.} other {⏳ Na fila: # tarefas à frente da sua.}}',
  'discord.job.drawing': '🎨 {n, plural, one {{kind, select, edit {Fazendo a edição} other {Desenhando a imagem}}} other {Desenhando # imagens}}…',
  'discord.job.preview': '🎨 Desenhando… prévia {preview}{n, plural, one {} other { (imagem {image} de {n})}}',
  'discord.job.cost': '{basis, select, table {{usd}} other {até {usd} (estimativa)}}',
  'discord.job.elapsed': '{time}',
  'discord.job.restarted_before_done': '🔌 O bot reiniciou antes de terminar isto; toque em Tentar de novo para executar outra vez.',
  'discord.job.cancelled_by': '✖️ Cancelada por {user}.',
  'discord.job.interrupted': '🔌 Esta tarefa parou quando o bot reiniciou; toque em Tentar de novo para executá-la outra vez.',
  'discord.job.too_large_to_upload': '{images, plural, one {A imagem} other {A imagem {index}}} é grande demais para enviar aqui (limite de {limit} por arquivo), mesmo recodificada.',
  'discord.job.reencoded':
    '{images, plural, one {A imagem} other {A imagem {index}}} foi recodificada como {format}{shrunk, select, yes { e reduzida para {percent}%} other {}} para caber no limite de envio deste servidor de {limit} por arquivo.',
  'discord.job.more_images': 'Mais imagens ({from}–{to} de {of})',
  'discord.job.upload_separately': 'As imagens eram grandes demais para enviar juntas aqui; elas vêm em mensagens separadas.',

  'history.none_kept': '{icon} Este bot não guarda histórico.',
  'history.erased': '{icon} Seu histórico foi apagado ({count} {count, plural, one {tarefa} other {tarefas}}). Imagens já publicadas continuam nos canais delas.',
  'history.not_admin': '{icon} Só um admin {scope, select, workspace {deste espaço de trabalho} other {deste servidor}} pode ver o histórico dele.',
  'history.title': '{whose, select, scope {<b>Imagens recentes {scope, select, workspace {deste espaço de trabalho} other {deste servidor}}</b>} other {<b>Suas últimas imagens</b> (só você vê isto)}}',
  'history.empty': 'Nada ainda.',
  'history.reroll_numbered': 'Gerar de novo {index}',
  'discord.history.line':
    '{rank}. {when}{author} “{prompt}” · {n} × {size, select, default {tamanho padrão} other {{size}}}, {quality, select, default {qualidade padrão} other {{quality}}} · {costKnown, select, yes {{cost}} other {{status, select, completed {concluída} failed {falhou} other {cancelada}}}}{hasLink, select, yes { · [mensagem]({link})} other {}}',

  'discord.settings.not_admin': '✋ Só um admin deste servidor pode ver e mudar as configurações dele.',
  'discord.unknown_interaction': 'Não conheço esse comando ou botão (talvez seja de uma versão antiga minha).',
  'discord.button.too_old': 'Esta tarefa é antiga demais: não guardo mais o que ela precisa. Inicie uma nova com /imagine ou /edit.',
  'discord.button.unknown': 'Esse botão não faz mais nada.',
  'discord.button.finished': 'Esta tarefa já terminou.',
  'discord.button.too_late_to_cancel': 'Esta tarefa está quase terminando e não pode mais ser cancelada.',
  'discord.button.only_requester': 'Só {user} ou um admin pode {action, select, delete {excluir esta mensagem} other {cancelar esta tarefa}}.',
  'discord.button.runs_elsewhere': 'Esta tarefa está sendo desenhada por outra instância do bot, que não pôde ser acessada: ela mostrará o resultado quando terminar.',
  'discord.edit.title_result': '{images, plural, one {Editar imagem} other {Editar imagem {index}}}',
  'discord.edit.title_message': '{images, plural, one {Editar imagem} other {Editar # imagens}}',
  'discord.edit.form_expired': 'Este formulário de edição é antigo demais: não tenho mais as imagens dele. Use “Editar imagem” na mensagem de novo.',
  'discord.edit.image_gone': 'Essa imagem não é mais guardada; edite uma mais recente ou use /edit com o arquivo.',
  'discord.edit.placeholder': 'ex.: deixe de noite, com lua cheia',
  'discord.edit.message_image': '{images, plural, one {a imagem dessa mensagem} other {a imagem {index} dessa mensagem}}',
  'discord.edit.message_has_no_images': 'Essa mensagem não tem imagens para editar (anexos PNG, JPEG ou WebP).',
  'discord.edit.message_has_too_many': 'Uma edição aceita no máximo {max} imagens, e essa mensagem tem {count}.',
  'discord.edit.message_links_elsewhere': 'Só edito imagens enviadas ao Discord, e essa mensagem tem links para imagens em outro lugar.',
  'discord.input.no_images': 'Não há imagem para editar: anexe uma imagem PNG, JPEG ou WebP.',
  'discord.input.too_many': 'Uma edição aceita no máximo {max} imagens, e há {count}.',
  'discord.input.host_not_allowed': 'Só baixo imagens enviadas ao Discord, e {label} não está hospedada lá; envie o próprio arquivo.',
  'discord.input.too_large': '{label} ({file}) tem {size}; cada imagem deve ter menos de {max}.',
  'discord.input.too_large_read': '{label} ({file}) é grande demais; {why, select, limit {cada imagem deve ter menos de {max}} other {ela é maior do que o Discord informou; anexe de novo}}.',
  'discord.input.download_failed': 'Não consegui baixar {label} ({file}) do Discord; o link pode ter expirado, então anexe de novo.',
  'discord.input.not_an_image': '{label} ({file}) não é uma imagem PNG, JPEG ou WebP.',

  'edit.what_should_change': 'O que deve mudar?',
  'error.on_my_side': 'Algo deu errado do meu lado; tente de novo daqui a pouco.',

  'discord.command.imagine.name': 'imaginar',
  'discord.command.imagine.description': 'Desenhar imagens a partir de uma descrição',
  'discord.command.edit.name': 'editar',
  'discord.command.edit.description': 'Editar ou combinar imagens com uma descrição',
  'discord.command.edit_image.name': 'Editar imagem',
  'discord.command.usage.name': 'imaginar-uso',
  'discord.command.usage.description': 'Quanto você gastou hoje e neste mês, e quanto resta dos seus orçamentos',
  'discord.command.history.name': 'imaginar-historico',
  'discord.command.history.description': 'Suas últimas 10 imagens, em privado; admins veem as do servidor; forget apaga as suas',
  'discord.command.admin.name': 'imaginar-admin',
  'discord.command.admin.description': 'Admins do servidor: mudar os orçamentos e regras de imagens deste servidor',
  'discord.command.admin.budget': 'Definir um orçamento do servidor, até o limite do operador; clear volta ao dele',
  'discord.command.admin.settings': 'Mostrar cada configuração deste servidor e de onde ela vem (operador ou admin)',
  'discord.command.admin.set': 'Mudar uma configuração deste servidor, dentro do que o operador permite',
  'discord.option.prompt_imagine': 'O que desenhar',
  'discord.option.prompt_edit': 'O que mudar',
  'discord.option.image': '{first, select, yes {A imagem a editar (PNG, JPEG ou WebP)} other {Outra imagem (PNG, JPEG ou WebP)}}',
  'discord.option.size': 'Largura x altura do resultado',
  'discord.option.quality': 'Qualidade maior custa mais e demora mais',
  'discord.option.background': 'transparent exige o formato {formats}',
  'discord.option.format': 'Formato de arquivo do resultado',
  'discord.option.count': 'Quantas imagens',
  'discord.option.show': 'Qual histórico (padrão: o seu)',
  'discord.option.cap': 'Qual orçamento',
  'discord.option.usd': 'Dólares americanos, 0 ou mais (ex.: 2.50), ou clear para a configuração do operador',
  'discord.option.setting': 'Qual configuração',
  'discord.option.value': '#canais, @cargos/@membros, palavras, um número…; clear para o padrão; add …/remove … para listas',
  'discord.choice.size': '{size} {shape, select, square {quadrada} landscape {paisagem} other {retrato}}{isDefault, select, yes { (padrão)} other {}}',
  'discord.choice.quality': '{quality, select, auto {auto (o serviço escolhe)} other {{quality}}}{isDefault, select, yes { (padrão)} other {}}',
  'discord.choice.background': '{background, select, transparent {transparent (exige o formato {formats})} other {{background}}}{isDefault, select, yes { (padrão)} other {}}',
  'discord.choice.format': '{transparent, select, yes {{format}} other {{format} (sem transparência)}}{isDefault, select, yes { (padrão)} other {}}',
  'discord.choice.show': '{show, select, mine {o meu} server {servidor (admins)} other {apagar o meu}}',

  'button.try_again': 'Tentar de novo',
  'slack.job.header': '{user} {kind, select, edit {pediu para editar {inputs, plural, one {uma imagem} other {# imagens}}} other {pediu}}: {prompt}',
  'slack.job.text': 'Pictor: {status}',
  'slack.job.plain_status':
    '{stage, select, queued {{ahead, plural, =0 {na fila} other {na fila, # à frente}}} running {desenhando…} posting {criada ({summary}), publicando as imagens} done {concluída ({summary})} not_posted {criada, mas não deu para publicar as imagens} failed {falhou: {failure}} other {cancelada}}',
  'slack.job.actions_text': 'Gerar de novo, Editar ou Excluir: {prompt}',
  'slack.job.finished_where':
    '{where, select, posting {Essa tarefa terminou: as imagens estão sendo publicadas, com Gerar de novo, Editar e Excluir logo depois.} dm {Essa tarefa terminou: as imagens e os botões Gerar de novo, Editar e Excluir foram enviados por mensagem direta a quem pediu.} link {Essa tarefa terminou: as imagens e os botões Gerar de novo, Editar e Excluir estão <{link}|aqui>.} other {Essa tarefa terminou: as imagens estão publicadas depois da mensagem dela, com os botões Gerar de novo, Editar e Excluir.}}',
  'slack.job.caption': '{user} {images, plural, one {aqui está sua imagem} other {aqui estão suas # imagens}}: {prompt}\n{summary}',
  'slack.job.cost': '{basis, select, table {{usd}} other {até {usd} (estimativa)}}',
  'slack.job.elapsed': '{time}',
  'slack.job.queued': '{ahead, plural, =0 {:hourglass_flowing_sand: Na fila, você é o próximo} other {:hourglass_flowing_sand: Na fila, # à frente}}',
  'slack.job.drawing': '{previews, plural, =0 {:art: Desenhando…} other {:art: Desenhando… a prévia # está na conversa}}',
  'slack.job.posting': ':outbox_tray: Criada ({summary}); publicando {images, plural, one {a imagem} other {as # imagens}}…',
  'slack.job.done':
    ':white_check_mark: Pronto · {summary} · {images, plural, one {a imagem está} other {# imagens estão}} {where, select, dm {nas suas mensagens diretas comigo} channel {logo abaixo} other {na conversa}}{actionsBeside, select, yes {, com Gerar de novo, Editar e Excluir} other {}}',
  'slack.job.not_posted': ':warning: {images, plural, one {A imagem foi criada} other {As imagens foram criadas}} ({summary}), mas não deu para publicar no Slack; toque em Gerar de novo para tentar outra vez.',
  'slack.job.failed': 'A tarefa falhou.',
  'slack.job.restarted': ':no_entry_sign: Parou porque o bot reiniciou; toque em Gerar de novo para executá-la outra vez.',
  'slack.job.cancelled_by': ':no_entry_sign: Cancelada por {user}',
  'slack.job.preview': 'Prévia {preview}{images, plural, one {} other { da imagem {image}}}',
  'slack.job.image': 'Imagem {index}',
  'slack.job.kept_images': '{user} {kept}',
  'slack.job.not_in_channel': 'Não consigo publicar nesta conversa, então não iniciei sua tarefa. Convide-me com `/invite @Pictor` (ou use-me em um canal em que eu esteja) e tente de novo.',
  'slack.job.not_posted_at_all': 'Não consegui publicar a mensagem da sua tarefa no Slack, então não a iniciei; tente de novo daqui a pouco.',

  'slack.input.no_images': 'Não há aqui nenhuma imagem PNG, JPEG ou WebP para editar; anexe uma (ou use `/imagine` para criar uma imagem nova).',
  'slack.input.too_many': 'São {count} imagens; uma edição aceita no máximo {max}.',
  'slack.input.too_large': '{named, select, yes {{name}} other {{what, select, image {Uma imagem} other {Um arquivo}}}} tem {size}; cada imagem deve ter menos de {max}.',
  'slack.input.wrong_type': '{named, select, yes {{name}} other {{what, select, image {Uma imagem} other {Um arquivo}}}} é {type}; posso editar imagens PNG, JPEG e WebP.',
  'slack.input.gone': '{named, select, yes {{name}} other {{what, select, image {Uma imagem} other {Um arquivo}}}} não está mais disponível no Slack.',
  'slack.input.host_not_allowed':
    '{named, select, yes {{name}} other {{what, select, image {Uma imagem} other {Um arquivo}}}} está guardado em {host}, que não é um dos servidores de arquivos do Slack, então não baixei.',
  'slack.input.download_failed':
    '{named, select, yes {{name}} other {{what, select, image {Uma imagem} other {Um arquivo}}}} não pôde ser baixado do Slack{reason, select, redirects { (redirecionamentos demais)} status { (status {status})} other {}}; tente de novo.',
  'slack.input.sign_in_page': 'O Slack respondeu com uma página de login em vez de {named, select, yes {{name}} other {o arquivo}}: o app precisa do escopo files:read (reinstale-o a partir do manifesto).',
  'slack.input.not_an_image': '{named, select, yes {{name}} other {{what, select, image {Uma imagem} other {Um arquivo}}}} não é uma imagem PNG, JPEG ou WebP (verificado pelo conteúdo).',
  'slack.input.no_address': '{named, select, yes {{name}} other {{what, select, image {Uma imagem} other {Um arquivo}}}} não tem um endereço de onde eu possa baixá-lo.',
  'slack.input.larger_than_said': '{named, select, yes {{name}} other {{what, select, image {Uma imagem} other {Um arquivo}}}} é maior do que o Slack informou; envie de novo.',

  'slack.imagine.example': '{command} um farol ao entardecer, aquarela --size 1536x1024',
  'slack.imagine.missing_prompt': 'Diga o que desenhar, por exemplo {example}.',
  'slack.flag.unknown': '{flag} não é uma opção.{meant, select, yes { Você quis dizer {near}?} other {}} As opções são {flags}.',
  'slack.flag.needs_value': '{flag} precisa de um valor: {allowed}.',
  'slack.flag.bad_value': '{given} não é permitido: {flag} aceita {allowed}.',
  'slack.flag.also': '{base}; também {aliases}',
  'slack.flag.help':
    '{flag, select, size {largura x altura} quality {detalhe, tempo e preço} background {transparent exige png ou webp} format {tipo de arquivo} n {quantas imagens} compression {para jpeg e webp} other {o quanto o filtro de conteúdo é rígido}}',
  'slack.help.flag': '• {flag} {allowed}{hasDefault, select, yes { (padrão {fallback})} other {}}: {help}',
  'slack.help.make': '<b>Criar imagens:</b> {example}',
  'slack.help.flags': 'As opções podem ir em qualquer lugar do texto:',
  'slack.help.edit':
    '<b>Editar imagens:</b> escolha <b>Edit image</b> no menu ⋯ de uma mensagem com imagens, use {command} para enviar até 10, ou me mencione em uma mensagem (ou conversa) com imagens: _@Pictor deixe o céu roxo_.',
  'slack.help.progress': 'O progresso aparece na mensagem que eu publico; as imagens chegam na conversa dela, com os botões <b>Gerar de novo</b> e <b>Editar</b>.',
  'slack.help.usage': '<b>Quanto você gastou:</b> {command} (hoje, este mês, quanto resta dos seus orçamentos).',
  'slack.help.admins': '<b>Admins do bot:</b> {command} (user-daily, user-monthly, workspace-daily, workspace-monthly; `clear` para a configuração do operador).',

  'slack.edit.title': 'Editar imagem',
  'slack.edit.editing': 'Editando {count, plural, one {1 imagem} other {# imagens}}: {names}',
  'slack.edit.files': 'Imagens (até {max})',
  'slack.edit.placeholder': 'deixe o céu roxo',
  'slack.edit.label': '{field, select, size {Tamanho} quality {Qualidade} background {Fundo} format {Formato} other {Imagens}}',
  'slack.edit.out_of_date': 'Este formulário está desatualizado; feche-o e comece a edição de novo.',
  'slack.edit.say_what': 'Diga o que deve mudar.',
  'slack.edit.pick_one': 'Escolha um de {values}.',
  'slack.edit.only_images': 'Só é possível editar imagens PNG, JPEG e WebP.',
  'slack.edit.could_not_open': 'Não consegui abrir o formulário de edição; tente de novo.',
  'slack.button.not_running': 'Essa tarefa não está mais em andamento.',
  'slack.button.only_requester_cancel': 'Só a pessoa que iniciou esta tarefa, ou um admin, pode cancelá-la.',
  'slack.button.gone_reroll': 'Não tenho mais os detalhes dessa tarefa; inicie uma nova com {command}.',
  'slack.button.gone_delete': 'Não tenho mais os detalhes dessa tarefa; exclua a mensagem dela pelo menu do próprio Slack.',
  'slack.button.only_requester_delete': 'Só {user} ou um admin pode excluir esta mensagem.',
  'slack.button.could_not_delete': 'Não consegui excluir essa mensagem; tente de novo.',
  'slack.button.gone_edit': 'Não tenho mais as imagens dessa tarefa; use o atalho *Edit image* nas imagens.',
  'slack.mention.example': '@Pictor deixe o céu roxo --size 1536x1024',
  'slack.settings.not_admin': ':raised_hand: Só um admin deste espaço de trabalho pode ver e mudar as configurações dele.',
  'slack.settings.usage': 'Digite {how}: SETTING é um de {names}; {show} mostra todas.',
  'slack.budget.usage':
    'Digite {how}: CAP é user-daily, user-monthly, workspace-daily ou workspace-monthly; USD é 0 ou mais (ex.: 2.50), ou `clear` para a configuração do operador.',
  'slack.history.line':
    '{rank}. {when}{author} em {channel} “{prompt}” · {n} × {size, select, default {tamanho padrão} other {{size}}}, {quality, select, default {qualidade padrão} other {{quality}}} · {costKnown, select, yes {{cost}} other {{status, select, completed {concluída} failed {falhou} other {cancelada}}}}{hasLink, select, yes { · <{link}|mensagem>} other {}}',
  'slack.home.usage_header': 'Seus gastos e orçamentos',
  'slack.home.history_header': 'Suas imagens recentes',
  'slack.home.history_empty': 'Nada ainda: crie sua primeira imagem com {command} em qualquer canal.',
  'slack.home.thumbnail': 'A imagem de “{prompt}”',
  'slack.home.defaults_header': 'O que você recebe sem escolher nada',
  'slack.home.defaults':
    'Tamanho {size}, qualidade {quality}, {previews, plural, =0 {sem prévias} one {# prévia} other {# prévias}} enquanto desenha. Aqui você pode pedir até {maxImages} {maxImages, plural, one {imagem} other {imagens}} por tarefa, na qualidade {qualities} e no tamanho {sizes}.',
  'slack.home.admin_header': 'Este espaço de trabalho (só admins)',
  'slack.home.how': 'Crie imagens com {command} em qualquer canal, edite-as com *Edit image* no menu ⋯ de uma mensagem, ou me mencione. Só você vê esta página.',
  'slack.step.bad_inputs': 'A etapa precisa de um prompt, de um canal e da pessoa para quem ela roda; tamanho, qualidade e quantidade precisam ser valores que o Pictor aceita.',
  'slack.step.cancelled': 'A tarefa de imagem foi interrompida antes de terminar.',
  'slack.step.not_posted': 'As imagens foram criadas, mas não deu para publicá-las no canal.',

  // House styles, role budgets and the audit channel
  'budget.role_set':
    '{scope, select, workspace {Os membros do grupo de usuários {role}} other {Os membros com o cargo {role}}} agora têm {usd} cada {period, select, day {por dia} other {por mês}}, no lugar do orçamento de cada usuário; quem tiver vários recebe o mais generoso (limite do operador por usuário: {operatorSet, select, yes {{operator}} other {nenhum}}).',
  'budget.role_cleared':
    '{scope, select, workspace {O grupo de usuários {role}} other {O cargo {role}}} não tem mais orçamento {period, select, day {diário} other {mensal}}: seus membros voltam ao orçamento de cada usuário, a menos que outro {scope, select, workspace {grupo} other {cargo}} deles tenha um.',
  'budget.role_member_caps_only':
    'O orçamento de um {scope, select, workspace {grupo de usuários} other {cargo}} é o que cada um dos seus membros pode gastar: use user-daily ou user-monthly.',
  'budget.too_many_roles':
    '{scope, select, workspace {Este espaço de trabalho} other {Este servidor}} já tem orçamentos para {max} {scope, select, workspace {grupos de usuários} other {cargos}}, o máximo; apague um primeiro.',
  'usage.role_cap':
    '• Seu orçamento {period, select, day {diário} other {mensal}}{setBy, select, role {, o do seu {scope, select, workspace {grupo de usuários} other {cargo}} {role}} other {}}: restam {left} de {limit} (gasto: {spent}); zera às {reset}{setBy, select, unknown_roles {. Não foi possível ler seus {scope, select, workspace {grupos de usuários} other {cargos}} agora, então vale o menor orçamento que poderia ser o seu (o de {role}).} other {}}',
  'usage.role_budgets':
    '<b>Orçamentos de {scope, select, workspace {grupos de usuários} other {cargos}}</b> (cada membro recebe o mais generoso dos seus, no lugar do orçamento de cada usuário):',
  'usage.role_budget':
    '• {role}: {hasDaily, select, yes {{daily} por dia} other {o orçamento de cada usuário por dia}} · {hasMonthly, select, yes {{monthly} por mês} other {o orçamento de cada usuário por mês}}',
  'discord.option.role':
    'Um cargo: seus membros recebem este orçamento no lugar do de cada usuário (user-daily/-monthly)',
  'slack.budget.group_usage':
    'Para um grupo de usuários, diga {how}: cada um dos seus membros recebe esse orçamento no lugar do orçamento de cada usuário.',
  'slack.budget.unknown_group':
    'Não encontro o grupo de usuários {group} neste espaço de trabalho{missingScope, select, yes {: o app precisa do escopo usergroups:read (reinstale-o a partir do manifesto)} other {}}.',
  'refusal.style_unknown':
    '{count, plural, =0 {Ainda não há estilos da casa aqui, então “{style}” não pode ser usado; deixe o estilo de fora ou peça a um admin que o defina.} other {Não há estilo da casa “{style}” aqui; escolha um de {styles}.}}',
  'refusal.style_option_not_allowed': 'O estilo da casa “{style}” pede {option} {value}, que não é permitido aqui; escolha {option} você mesmo, use outro estilo ou peça a um admin para alterá-lo.',
  'refusal.style_blocked_word': 'O estilo da casa “{style}” acrescenta “{word}”, que está bloqueado aqui; escolha outro estilo ou peça a um admin que o altere.',
  'styles.title': '<b>Estilos da casa</b> ({count} de no máximo {max}); os membros escolhem um com {how}:',
  'styles.none': 'Ainda não há estilos da casa; admins definem um com {command}.',
  'styles.line': '• {name}: “{text}”{hasOptions, select, yes { ({options})} other {}}',
  'styles.defined': 'Estilo da casa {name} {replaced, select, yes {substituído} other {definido}}: “{text}”{hasOptions, select, yes { ({options})} other {}}. Os membros o escolhem com {how}.',
  'styles.removed': 'Estilo da casa {name} removido; um trabalho que o cite é recusado.',
  'styles.unknown': 'Não há estilo da casa {name} aqui.',
  'styles.invalid_name': 'O nome de um estilo tem de 1 a 32 letras minúsculas, dígitos, - ou _ (ex.: neon-poster); “{name}” não é um.',
  'styles.invalid_text':
    'O texto de um estilo tem no máximo {max} caracteres, com {placeholder} no máximo uma vez, onde vai o prompt do membro (ex.: “neon-lit, {placeholder}, synthwave palette”); texto sem ele vai depois do prompt.',
  'styles.too_many': '{scope, select, workspace {Este workspace já tem} other {Este servidor já tem}} {max} estilos da casa, o máximo; remova um primeiro.',
  'styles.not_admin': 'Só um admin {scope, select, workspace {deste workspace} other {deste servidor}} pode definir estilos da casa.',
  'styles.choice': '{name}: {text}',
  'styles.more': '… e mais {count}.',
  'discord.command.admin.styles': 'Listar os estilos da casa deste servidor',
  'discord.command.admin.style': 'Definir ou substituir um estilo da casa; text clear o remove',
  'discord.option.style': 'Um estilo da casa deste servidor: texto em volta do seu prompt e suas opções',
  'discord.option.style_name': 'O nome do estilo (letras minúsculas, dígitos, - ou _)',
  'discord.option.style_text': 'Texto em volta do prompt: antes {placeholder} depois; ou clear para remover o estilo',
  'slack.help.style': '<b>Estilos da casa:</b> {flag} acrescenta um estilo deste workspace ao seu prompt; {command} os lista.',
  'slack.flag.style_value': 'o nome de um dos estilos da casa deste workspace',
  'slack.styles.usage':
    'Diga {how}: NAME são letras minúsculas, dígitos, - ou _; TEXT vai em volta do prompt, {placeholder} onde vai o prompt; as flags definem as opções do estilo; {clear} o remove.',
  // Private results and member defaults
  'refusal.private_not_allowed':
    '{scope, select, workspace {Este workspace} other {Este servidor}} não permite resultados privados{fromDefault, select, yes {, e o seu padrão os pede: peça um público com {platform, select, slack {--public} other {private: False}} ou desative o seu padrão com {platform, select, slack {/imagine settings --private off} other {/imagine-settings private: False}}} other {; peça de novo sem {platform, select, slack {--private} other {private}}}}.',
  'settings.hint.onOff': '{on} ou {off}',
  'member.ignored':
    'Não usado aqui, pois as regras {scope, select, workspace {deste workspace} other {deste servidor}} não {count, plural, one {o permitem} other {os permitem}}: o seu padrão {defaults}.',
  'member.title': '<b>Seus padrões</b> (onde você usar o Pictor; um que as regras de um {scope, select, workspace {workspace} other {servidor}} não permitem não é usado lá)',
  'member.none': 'Você não definiu nenhum: valem os padrões {scope, select, workspace {deste workspace} other {deste servidor}}.',
  'member.line': '• {name}: {value}{ignored, select, yes { — não permitido aqui, não usado} refused { — não permitido aqui: um trabalho aqui é recusado, a menos que você peça um público} other {}}',
  'member.on_off': '{on, select, yes {ligado} other {desligado}}',
  'member.scope':
    '<b>{scope, select, workspace {Este workspace} other {Este servidor}}</b> (quando você não escolhe nada): tamanho {size}, qualidade {quality}, {previews, plural, =0 {sem prévias} one {# prévia} other {# prévias}}; até {maxImages, plural, one {# imagem} other {# imagens}} por tarefa; resultados privados {privateResults, select, yes {permitidos} other {não permitidos}}.',
  'member.how': 'Mude os seus com {command}; {clear} apaga um, ou todos.',
  'member.saved': 'Seus padrões foram salvos.',
  'discord.command.settings.name': 'imagine-settings',
  'discord.command.settings.description': 'Seus padrões: tamanho, qualidade, formato, quantidade, privado, prévias; sem opção, mostra-os',
  'discord.option.private': 'Só você vê a tarefa e as imagens (se este servidor permitir)',
  'discord.option.default_private': 'Suas tarefas são mostradas só a você, a menos que peça outra coisa',
  'discord.option.default_previews': 'Mostrar prévias enquanto suas imagens são desenhadas',
  'discord.option.clear': 'Apagar um dos seus padrões, ou todos',
  'discord.choice.clear': '{name, select, all {todos} other {{name}}}',
  'slack.job.private_in_dm': ':lock: Só você verá esta tarefa: estou desenhando-a nas nossas mensagens diretas.',
  'slack.settings.on_off': '{flag} aceita on ou off.',
  'slack.help.private': '<b>Só para você:</b> {private} mostra a tarefa só a você, nas nossas mensagens diretas; {public} a mostra no canal quando o seu padrão é privado.',
  'slack.help.settings': '<b>Seus padrões:</b> {command} (tamanho, qualidade, formato, quantidade, privado, prévias).',
} as const satisfies Catalog;
