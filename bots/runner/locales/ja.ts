import type { Catalog } from '../words.js';

/** 日本語。です・ます調。コマンド・設定・オプションの語は英語のまま（そのまま入力するため）。 */
export const ja = {
  'time.resets': '{at}（あと {wait}）',
  'time.days': '{days, plural, other {# 日}}',

  'refusal.restarting': 'ボットを再起動しています。1 分ほどしてからもう一度お試しください。',
  'refusal.scope_not_allowed':
    'このボットは{scope, select, workspace {このワークスペース} other {このサーバー}}では有効になっていません。運営者がここでの利用を許可していないため、画像は作成されません。{scope, select, workspace {このワークスペース} other {このサーバー}}を追加するよう、ボットの運営者に依頼してください。',
  'refusal.dms_not_enabled':
    'このボットは追加されたサーバーでのみ画像を作成します。運営者が DM とユーザーインストールを有効にしていません。それらのサーバーのいずれかでご利用ください。',
  'refusal.member_blocked':
    '{scope, select, workspace {このワークスペース} other {このサーバー}}の管理者によって、ここでの画像作成が禁止されています。誤りだと思われる場合は管理者にお問い合わせください。',
  'refusal.channel_not_allowed': 'このチャンネルでは画像を作成できません。{channels} をご利用ください。',
  'refusal.member_not_allowed':
    '{scope, select, workspace {このワークスペース} other {このサーバー}}の管理者が画像を作成できるメンバーを指定しており、あなたは含まれていません。管理者に利用を依頼してください。',
  'refusal.blocked_word': 'プロンプトに、ここで禁止されている「{word}」が含まれています。言い換えてもう一度お試しください。',
  'refusal.too_many_images': 'ここでは 1 件のジョブで作成できる画像は最大 {limit} 枚です。枚数を減らしてください。',
  'refusal.quality_not_allowed': 'その品質はここでは使えません。{allowed} から選んでください。',
  'refusal.high_quality_not_allowed':
    '品質 high は{scope, select, workspace {このワークスペース} other {このサーバー}}の一部のメンバー専用です。別の品質を選ぶか、管理者にお問い合わせください。',
  'refusal.size_not_allowed': 'そのサイズはここでは使えません。{allowed} から選んでください。',
  'refusal.moderation_not_allowed':
    'ここではモデレーション low は使えません。moderation を指定せず、{scope, select, workspace {このワークスペース} other {このサーバー}}の設定を使ってください。',
  'refusal.user_concurrency':
    'すでに {used} 件のジョブが待機中または実行中で、同時に実行できる上限（{limit} 件）に達しています。いずれかが終わるのを待つか、キャンセルしてください。',
  'refusal.user_cooldown': 'ジョブは {every} に 1 件まで開始できます。{wait} 後にもう一度お試しください。',
  'refusal.scope_paused':
    '{scope, select, workspace {このワークスペース} dm {サーバー外でのあなたのボット利用} other {このサーバー}}は一時停止中です。直近 1 時間の支出が {used} で、通常の利用で許容される 1 時間あたり {limit} を超えました。ボットの運営者（API キーの支払い者）が Pictor コンソールから再開するまで、新しいジョブは受け付けません。',
  'refusal.budget_reached':
    '{owner, select, user {あなたの} scope {{scope, select, workspace {このワークスペースの} dm {サーバー外でのあなたの} other {このサーバーの}}} other {アカウント全体（この API キーを共有するすべてのサーバー・ワークスペース・ツール）の}}{period, select, day {1日} other {1か月}}の予算 {limit} に達しました（使用済み {used}、残り {left}）。{reset} にリセットされます。',
  'refusal.budget_would_pass':
    'このジョブは最大 {estimate} かかる可能性があり、{owner, select, user {あなたの} scope {{scope, select, workspace {このワークスペースの} dm {サーバー外でのあなたの} other {このサーバーの}}} other {アカウント全体の}}{period, select, day {1日} other {1か月}}の予算 {limit} の残り {left} を超えます（使用済み {used}）。枚数を減らすか安い設定にすれば収まるかもしれません。予算は {reset} にリセットされます。',
  'refusal.other_limit': 'このジョブは上限 {code} により拒否されました。',
  'refusal.queue_full':
    'ボットが混み合っています。{queued} 件のジョブが待機中で、同時に並べられる上限（{max} 件）に達しているため、このジョブは開始されず料金もかかりません。{known, select, yes {今のペースでは新しいジョブは約 {wait} 待つことになるので、その頃にもう一度お試しください。} other {直近 1 分間に送信されたジョブがないため、数分後にもう一度お試しください。}}',
  'refusal.queue_full_images':
    'ボットが混み合っています。待機中の編集が {held} の画像を保持しており、この編集の {job} を加えると一度に保持できる上限（{max}）を超えるため、開始されず料金もかかりません。{known, select, yes {今のペースでは新しいジョブは約 {wait} 待つことになるので、その頃にもう一度お試しください。} other {直近 1 分間に送信されたジョブがないため、数分後にもう一度お試しください。}}',
  'refusal.input_too_large':
    'この編集の画像は合計 {job} で、このボットが一度に受け付けられる量（{max}）を超えるため、開始されず料金もかかりません。画像の数を減らすか、小さい画像を使ってください。',

  'failure.internal_error': 'ボット内部で問題が発生しました。もう一度お試しください。繰り返し起きる場合はボットの運営者にお知らせください。',
  'failure.validation':
    '{subject, select, prompt {プロンプトが無効です} image {入力画像が無効です} other {オプション {option} が無効です}}: {detail}{allowed, select, some {（使用可能: {values}）} other {}}。',
  'failure.moderation_blocked': '画像サービスがコンテンツポリシーによりこのリクエストを拒否しました。プロンプト（または画像）を変えてもう一度お試しください。',
  'failure.rate_limited': '画像サービスが混み合っています。{known, select, yes {約 {wait}} other {1 分ほど}}後にもう一度お試しください。',
  'failure.quota_exhausted': '画像サービスのアカウントのクレジットが不足しています。ボットの運営者にお知らせください。',
  'failure.authentication_failed': '画像サービスがボットの API キーを受け付けませんでした。ボットの運営者にお知らせください。',
  'failure.permission_denied': '画像サービスがボットのアカウントにこのモデルの利用を許可していません。ボットの運営者にお知らせください。',
  'failure.not_found': 'ボットに設定された画像サービスのアドレスが誤っています。ボットの運営者にお知らせください。',
  'failure.bad_request_option': '画像サービスがオプション {option} を拒否しました。変更してもう一度お試しください。',
  'failure.bad_request': '画像サービスがリクエストを拒否しました。オプションと画像を確認して、もう一度お試しください。',
  'failure.server_error':
    '{kind, select, stream {画像の作成中に画像サービスがエラーを報告しました} overloaded {画像サービスが過負荷で、何度か試しても応答がありませんでした} other {画像サービスで内部エラーが起き、何度か試しても回復しませんでした}}。{known, select, yes {約 {wait}} other {数分}}後にもう一度お試しください。',
  'failure.api_error': '画像サービスが予期しないエラーを返しました。数分後にもう一度お試しください。',
  'failure.connection_failed': 'ボットが画像サービスに接続できませんでした。数分後にもう一度お試しください。',
  'failure.timeout':
    '{kind, select, idle {画像サービスから {howLong} 何も届かなかったため、ジョブを停止しました。} other {ジョブが {howLong} を超えたため、停止しました。}}リクエストはサービスに届いており課金された可能性がある（見積もり額が予算に計上されます）ため、再送信はしていません。「再試行」で新しいジョブを開始できます。品質を下げるのもよいでしょう。',
  'failure.stream_broken':
    'リクエストが届いた後、すべての画像を受け取る前に画像サービスとの接続が切れました。課金された可能性がある（届かなかった各画像の見積もり額が予算に計上されます）ため、再送信はしていません。「再試行」で新しいジョブを開始できます。',
  'failure.aborted': 'ジョブは完了前に停止されました。もう一度お試しください。',
  'failure.bad_response': '画像サービスが依頼した画像ではないものを返しました。課金された可能性があるため、再送信はしていません。',

  'job.queue_trouble': '共有キューに一時的に接続できないため、いつもより時間がかかっています。ジョブの順番は保たれ、実行されるまで料金はかかりません。',
  'job.kept_images': '{count, plural, other {それまでに完成した画像 # 枚はこちらです。料金がかかります。}}',

  'usage.your_spend': '<b>あなたの支出</b>（UTC）: 今日 {today} · 今月 {month}',
  'usage.no_budget': 'あなたに適用される予算はありません。ボットの運営者が設定していません。',
  'usage.budgets': '<b>予算</b>',
  'usage.cap':
    '• {whose, select, user {あなたの} account {アカウント全体の} other {{scope, select, dm {サーバー外でのあなたの} workspace {このワークスペースの} other {このサーバーの}}}}{period, select, day {1日} other {1か月}}の予算{setBy, select, chat {（管理者が設定）} other {}}: 残り {left} / {limit}（使用済み {spent}）、リセット: {reset}',
  'usage.scope_spend': '<b>{scope, select, workspace {このワークスペース} other {このサーバー}}</b>（UTC）: 今日 {today} · 今月 {month}',
  'usage.no_jobs_yet': '今月はまだ完了したジョブがありません。',
  'usage.top_users': '今月の支出上位ユーザー:',
  'usage.top_user': '{rank}. {user} {usd}（{jobs} 件）',

  'budget.amount_hint': '予算は米ドルで 0 以上（例: 2.50）を指定するか、運営者の設定に戻すには clear と入力してください。',
  'budget.not_admin': '{scope, select, workspace {このワークスペース} other {このサーバー}}の予算を変更できるのは管理者だけです。',
  'budget.above_operator_cap':
    'ボットの運営者は{whose, select, user {各ユーザーの{period, select, day {1日} other {1か月}}の予算} other {{scope, select, workspace {このワークスペース} other {このサーバー}}の{period, select, day {1日} other {1か月}}の予算}}の上限を {operator}（{variable}）にしています。管理者は上限より低くは設定できますが、高くはできません。引き上げは運営者に依頼してください。',
  'budget.cleared':
    '{whose, select, user {各ユーザーの{period, select, day {1日} other {1か月}}の予算} other {{scope, select, workspace {このワークスペース} other {このサーバー}}の{period, select, day {1日} other {1か月}}の予算}}を運営者の設定（{operatorSet, select, yes {{operator}} other {上限なし}}）に戻しました。',
  'budget.set':
    '{scope, select, workspace {このワークスペース} other {このサーバー}}の{whose, select, user {各ユーザーの{period, select, day {1日} other {1か月}}の予算} other {{period, select, day {1日} other {1か月}}の予算}}を {usd} にしました（運営者の上限: {operatorSet, select, yes {{operator}} other {なし}}）。',

  'settings.not_admin': '{scope, select, workspace {このワークスペース} other {このサーバー}}の設定を変更できるのは管理者だけです。',
  'settings.unknown': '{names} のいずれかを選んでください。',
  'settings.takes': '{setting} には {hint} を指定します。',
  'settings.changed': '{setting} を {value} にしました（変更前: {wasDefault, select, yes {既定値} other {{was}}}）。',
  'settings.cleared': '{setting} を既定値に戻しました（変更前: {wasDefault, select, yes {既定値} other {{was}}}）。',
  'settings.at_most': '最大 {max}',
  'settings.beyond_operator': 'ボットの運営者は {setting} に {allowed} を許可しています。管理者はその範囲内で選べますが、範囲外は選べません。変更は運営者に依頼してください。',
  'settings.title':
    '{scope, select, workspace {このワークスペース} other {このサーバー}}の設定 — それぞれの由来: 運営者（ボットの環境変数）、管理者（ここで設定）、既定値。',
  'settings.allowed_here':
    '• ここでのボット利用: {allowed, select, yes {許可} other {不許可 — 運営者が{scope, select, workspace {このワークスペース} other {このサーバー}}を許可していないため、すべてのジョブが拒否されます}}（運営者）',
  'settings.line': '• {setting}: {value}（{source}）',
  'settings.operator_words': '• 運営者が禁止した語（全体）: {words}（運営者）',
  'settings.source': '{source, select, operator {運営者} admin {管理者} other {既定値}}',
  'settings.source_admin': '管理者: {who}、{when}',
  'settings.how_to_change': '変更するには {command} を使います（既定値に戻すには clear、リストには add または remove）。',
  'settings.empty.channels': 'すべてのチャンネル',
  'settings.empty.allowed': '全員',
  'settings.empty.blocked': 'なし',
  'settings.empty.none': 'なし',
  'settings.empty.highQualityFor': '使える人全員',
  'settings.hint.channels': 'チャンネルのメンション（#art #memes）。すべてのチャンネルにするには clear',
  'settings.hint.allowed': 'ユーザーまたはロールのメンション（@artists @sam）。全員にするには clear',
  'settings.hint.blocked': 'ユーザーのメンション（@sam）',
  'settings.hint.blockedWords': 'カンマ区切りの語または語句（gore, red fox）',
  'settings.hint.highQualityFor': '品質 high を使えるユーザーまたはロールのメンション。使える人全員にするには clear',
  'settings.hint.someOf': '{values} から 1 つ以上',
  'settings.hint.oneOf': '{values} のいずれか',
  'settings.hint.moderation': '{low} または {auto}',
  'settings.hint.number': '{min} から {max} までの整数',

  'button.cancel': 'キャンセル',
  'button.retry': '再試行',
  'button.reroll': '再生成',
  'button.delete': '削除',
  'button.edit': '編集',
  'button.edit_image': '{images, plural, =1 {編集} other {編集 {index}}}',

  'discord.job.getting_ready': '⏳ 準備中…',
  'discord.job.queued': '{ahead, plural, =0 {⏳ 次に実行されます…} other {⏳ 待機中: あなたの前に # 件のジョブがあります。}}',
  'discord.job.drawing': '🎨 {n, plural, =1 {{kind, select, edit {編集中} other {画像を描画中}}} other {# 枚の画像を描画中}}…',
  'discord.job.preview': '🎨 描画中… プレビュー {preview}{n, plural, =1 {} other {（画像 {image} / {n}）}}',
  'discord.job.cost': '{basis, select, table {{usd}} other {最大 {usd}（見積もり）}}',
  'discord.job.elapsed': '{time}',
  'discord.job.restarted_before_done': '🔌 完了前にボットが再起動しました。「再試行」を押すともう一度実行します。',
  'discord.job.cancelled_by': '✖️ {user} がキャンセルしました。',
  'discord.job.interrupted': '🔌 このジョブはボットの再起動で停止しました。「再試行」を押すともう一度実行します。',
  'discord.job.too_large_to_upload': '{images, plural, =1 {画像} other {画像 {index}}}は再エンコードしてもここにアップロードするには大きすぎます（1 ファイルあたりの上限 {limit}）。',
  'discord.job.reencoded':
    '{images, plural, =1 {画像} other {画像 {index}}}は、このサーバーのアップロード上限（1 ファイルあたり {limit}）に収まるよう {format} に再エンコード{shrunk, select, yes {し、{percent}% に縮小} other {}}しました。',
  'discord.job.more_images': 'その他の画像（{from}–{to} / {of}）',
  'discord.job.upload_separately': '画像が大きすぎてまとめてアップロードできませんでした。別々のメッセージで続けて送ります。',

  'history.none_kept': '{icon} このボットは履歴を保存していません。',
  'history.erased': '{icon} 履歴を削除しました（{count} 件）。投稿済みの画像はそれぞれのチャンネルに残ります。',
  'history.not_admin': '{icon} {scope, select, workspace {このワークスペース} other {このサーバー}}の履歴を見られるのは管理者だけです。',
  'history.title': '{whose, select, scope {<b>{scope, select, workspace {このワークスペース} other {このサーバー}}の最近の画像</b>} other {<b>あなたの最近の画像</b>（あなたにだけ表示されています）}}',
  'history.empty': 'まだありません。',
  'history.reroll_numbered': '再生成 {index}',
  'discord.history.line':
    '{rank}. {when}{author}「{prompt}」 · {n} × {size, select, default {既定のサイズ} other {{size}}}、{quality, select, default {既定の品質} other {{quality}}} · {costKnown, select, yes {{cost}} other {{status, select, completed {完了} failed {失敗} other {キャンセル}}}}{hasLink, select, yes { · [メッセージ]({link})} other {}}',

  'discord.settings.not_admin': '✋ このサーバーの設定を表示・変更できるのは管理者だけです。',
  'discord.unknown_interaction': 'そのコマンドまたはボタンはわかりません（以前のバージョンのものかもしれません）。',
  'discord.button.too_old': 'このジョブは古すぎます。必要な情報をもう保持していません。/imagine または /edit で新しく始めてください。',
  'discord.button.unknown': 'このボタンはもう使えません。',
  'discord.button.finished': 'このジョブはすでに完了しています。',
  'discord.button.too_late_to_cancel': 'このジョブはまもなく完了するため、もうキャンセルできません。',
  'discord.button.only_requester': '{action, select, delete {このメッセージを削除} other {このジョブをキャンセル}}できるのは {user} または管理者だけです。',
  'discord.button.runs_elsewhere': 'このジョブは接続できない別のボットインスタンスで描画中です。完了するとそちらで結果が表示されます。',
  'discord.edit.title_result': '{images, plural, =1 {画像を編集} other {画像 {index} を編集}}',
  'discord.edit.title_message': '{images, plural, =1 {画像を編集} other {# 枚の画像を編集}}',
  'discord.edit.form_expired': 'この編集フォームは古すぎます。画像をもう保持していません。メッセージでもう一度「画像を編集」を使ってください。',
  'discord.edit.image_gone': 'その画像はもう保持していません。新しい画像を編集するか、ファイルを添えて /edit を使ってください。',
  'discord.edit.placeholder': '例: 夜にして、満月を入れて',
  'discord.edit.message_image': '{images, plural, =1 {そのメッセージの画像} other {そのメッセージの画像 {index}}}',
  'discord.edit.message_has_no_images': 'そのメッセージには編集できる画像（PNG、JPEG、WebP の添付ファイル）がありません。',
  'discord.edit.message_has_too_many': '1 回の編集で扱える画像は最大 {max} 枚ですが、そのメッセージには {count} 枚あります。',
  'discord.edit.message_links_elsewhere': '編集できるのは Discord にアップロードされた画像だけですが、そのメッセージは外部の画像にリンクしています。',
  'discord.input.no_images': '編集する画像がありません。PNG、JPEG、WebP の画像を添付してください。',
  'discord.input.too_many': '1 回の編集で扱える画像は最大 {max} 枚ですが、{count} 枚あります。',
  'discord.input.host_not_allowed': 'ダウンロードできるのは Discord にアップロードされた画像だけですが、{label} は Discord 上にありません。ファイル自体をアップロードしてください。',
  'discord.input.too_large': '{label}（{file}）は {size} です。各画像は {max} 未満にしてください。',
  'discord.input.too_large_read': '{label}（{file}）は大きすぎます。{why, select, limit {各画像は {max} 未満にしてください} other {Discord が示したサイズより大きいため、もう一度添付してください}}。',
  'discord.input.download_failed': '{label}（{file}）を Discord からダウンロードできませんでした。リンクの期限が切れた可能性があるので、もう一度添付してください。',
  'discord.input.not_an_image': '{label}（{file}）は PNG、JPEG、WebP の画像ではありません。',

  'edit.what_should_change': '何を変えますか？',
  'error.on_my_side': 'こちら側で問題が発生しました。少し待ってからもう一度お試しください。',

  'discord.command.imagine.name': '画像生成',
  'discord.command.imagine.description': 'テキストの説明から画像を描きます',
  'discord.command.edit.name': '画像編集',
  'discord.command.edit.description': 'テキストの説明で画像を編集・合成します',
  'discord.command.edit_image.name': '画像を編集',
  'discord.command.usage.name': '画像生成-利用状況',
  'discord.command.usage.description': '今日と今月の支出と、予算の残りを表示します',
  'discord.command.history.name': '画像生成-履歴',
  'discord.command.history.description': '最近の画像 10 件を非公開で表示。管理者はサーバーの履歴も。forget で削除',
  'discord.command.admin.name': '画像生成-管理',
  'discord.command.admin.description': 'サーバー管理者: このサーバーの画像の予算とルールを変更します',
  'discord.command.admin.budget': 'このサーバーの予算を運営者の上限以下で設定します。clear で運営者の設定に戻します',
  'discord.command.admin.settings': 'このサーバーの各設定とその由来（運営者または管理者）を表示します',
  'discord.command.admin.set': '運営者が許可する範囲内で、このサーバーの設定を変更します',
  'discord.option.prompt_imagine': '描いてほしいもの',
  'discord.option.prompt_edit': '変えたいこと',
  'discord.option.image': '{first, select, yes {編集する画像（PNG、JPEG、WebP）} other {追加の画像（PNG、JPEG、WebP）}}',
  'discord.option.size': '出力の幅 x 高さ',
  'discord.option.quality': '品質が高いほど料金も時間もかかります',
  'discord.option.background': 'transparent には {formats} 形式が必要です',
  'discord.option.format': '出力のファイル形式',
  'discord.option.count': '画像の枚数',
  'discord.option.show': 'だれの履歴か（既定: 自分）',
  'discord.option.cap': 'どの予算か',
  'discord.option.usd': '米ドルで 0 以上（例: 2.50）、または運営者の設定に戻す clear',
  'discord.option.setting': 'どの設定か',
  'discord.option.value': '#チャンネル、@ロール/@メンバー、語、数値など。既定値は clear、リストは add …/remove …',
  'discord.choice.size': '{size} {shape, select, square {正方形} landscape {横長} other {縦長}}{isDefault, select, yes {（既定）} other {}}',
  'discord.choice.quality': '{quality, select, auto {auto（サービスが選択）} other {{quality}}}{isDefault, select, yes {（既定）} other {}}',
  'discord.choice.background': '{background, select, transparent {transparent（{formats} 形式が必要）} other {{background}}}{isDefault, select, yes {（既定）} other {}}',
  'discord.choice.format': '{transparent, select, yes {{format}} other {{format}（透過なし）}}{isDefault, select, yes {（既定）} other {}}',
  'discord.choice.show': '{show, select, mine {自分} server {サーバー（管理者）} other {自分の履歴を削除}}',

  'button.try_again': 'もう一度',
  'slack.job.header': '{user} {kind, select, edit {が画像 {inputs} 枚の編集を依頼} other {のリクエスト}}: {prompt}',
  'slack.job.text': 'Pictor: {status}',
  'slack.job.plain_status':
    '{stage, select, queued {{ahead, plural, =0 {待機中} other {待機中、前に # 件}}} running {描画中…} posting {作成済み（{summary}）、画像を投稿中} done {完了（{summary}）} not_posted {作成済みですが、画像を投稿できませんでした} failed {失敗: {failure}} other {キャンセル済み}}',
  'slack.job.actions_text': '再生成・編集・削除: {prompt}',
  'slack.job.finished_where':
    '{where, select, posting {そのジョブは完了しています。画像を投稿中で、その直後に「再生成」「編集」「削除」が続きます。} dm {そのジョブは完了しています。画像と「再生成」「編集」「削除」ボタンは、依頼した人の DM に送られました。} link {そのジョブは完了しています。画像と「再生成」「編集」「削除」ボタンは<{link}|こちら>です。} other {そのジョブは完了しています。画像はジョブのメッセージの後に、「再生成」「編集」「削除」ボタンとともに投稿されています。}}',
  'slack.job.caption': '{user} {images, plural, =1 {画像ができました} other {画像 # 枚ができました}}: {prompt}\n{summary}',
  'slack.job.cost': '{basis, select, table {{usd}} other {最大 {usd}（見積もり）}}',
  'slack.job.elapsed': '{time}',
  'slack.job.queued': '{ahead, plural, =0 {:hourglass_flowing_sand: 待機中、次に実行} other {:hourglass_flowing_sand: 待機中、前に # 件}}',
  'slack.job.drawing': '{previews, plural, =0 {:art: 描画中…} other {:art: 描画中… プレビュー # をスレッドに投稿しました}}',
  'slack.job.posting': ':outbox_tray: 作成しました（{summary}）。{images, plural, =1 {画像} other {画像 # 枚}}を投稿しています…',
  'slack.job.done':
    ':white_check_mark: 完了 · {summary} · {images, plural, =1 {画像は} other {画像 # 枚は}}{where, select, dm {私との DM に} channel {下に投稿しました} other {スレッドにあります}}{actionsBeside, select, yes {（「再生成」「編集」「削除」付き）} other {}}',
  'slack.job.not_posted': ':warning: {images, plural, =1 {画像} other {画像}}は作成されました（{summary}）が、Slack に投稿できませんでした。「再生成」を押してもう一度お試しください。',
  'slack.job.failed': 'ジョブが失敗しました。',
  'slack.job.restarted': ':no_entry_sign: ボットの再起動により停止しました。「再生成」を押すともう一度実行します。',
  'slack.job.cancelled_by': ':no_entry_sign: {user} がキャンセルしました',
  'slack.job.preview': 'プレビュー {preview}{images, plural, =1 {} other {（画像 {image}）}}',
  'slack.job.image': '画像 {index}',
  'slack.job.kept_images': '{user} {kept}',
  'slack.job.not_in_channel': 'この会話には投稿できないため、ジョブを開始しませんでした。`/invite @Pictor` で招待する（または私が参加しているチャンネルで使う）と、もう一度お試しいただけます。',
  'slack.job.not_posted_at_all': 'ジョブのメッセージを Slack に投稿できなかったため、開始しませんでした。少し待ってからもう一度お試しください。',

  'slack.input.no_images': 'ここには編集できる PNG、JPEG、WebP の画像がありません。画像を添付してください（新しい画像を作るなら `/imagine`）。',
  'slack.input.too_many': '画像が {count} 枚あります。1 回の編集で扱えるのは最大 {max} 枚です。',
  'slack.input.too_large': '{named, select, yes {{name}} other {{what, select, image {画像} other {ファイル}}}}は {size} です。各画像は {max} 未満にしてください。',
  'slack.input.wrong_type': '{named, select, yes {{name}} other {{what, select, image {画像} other {ファイル}}}}は {type} です。編集できるのは PNG、JPEG、WebP の画像です。',
  'slack.input.gone': '{named, select, yes {{name}} other {{what, select, image {画像} other {ファイル}}}}は Slack でもう利用できません。',
  'slack.input.host_not_allowed':
    '{named, select, yes {{name}} other {{what, select, image {画像} other {ファイル}}}}は Slack のファイルホストではない {host} に保存されているため、ダウンロードしませんでした。',
  'slack.input.download_failed':
    '{named, select, yes {{name}} other {{what, select, image {画像} other {ファイル}}}}を Slack からダウンロードできませんでした{reason, select, redirects {（リダイレクトが多すぎます）} status {（ステータス {status}）} other {}}。もう一度お試しください。',
  'slack.input.sign_in_page': 'Slack が{named, select, yes {{name}} other {ファイル}}の代わりにサインインページを返しました。アプリには files:read スコープが必要です（マニフェストから再インストールしてください）。',
  'slack.input.not_an_image': '{named, select, yes {{name}} other {{what, select, image {画像} other {ファイル}}}}は PNG、JPEG、WebP の画像ではありません（内容で確認）。',
  'slack.input.no_address': '{named, select, yes {{name}} other {{what, select, image {画像} other {ファイル}}}}にはダウンロードできるアドレスがありません。',
  'slack.input.larger_than_said': '{named, select, yes {{name}} other {{what, select, image {画像} other {ファイル}}}}は Slack が示したサイズより大きいです。もう一度アップロードしてください。',

  'slack.imagine.example': '{command} 夕暮れの灯台、水彩画 --size 1536x1024',
  'slack.imagine.missing_prompt': '描いてほしいものを書いてください。例: {example}',
  'slack.flag.unknown': '{flag} はフラグではありません。{meant, select, yes {{near} のことですか？} other {}}フラグは {flags} です。',
  'slack.flag.needs_value': '{flag} には値が必要です: {allowed}。',
  'slack.flag.bad_value': '{given} は使えません。{flag} に指定できるのは {allowed} です。',
  'slack.flag.also': '{base}。ほかに {aliases}',
  'slack.flag.help':
    '{flag, select, size {幅 x 高さ} quality {精細さ・時間・料金} background {transparent には png または webp が必要} format {ファイル形式} n {画像の枚数} compression {jpeg と webp 用} other {コンテンツフィルターの厳しさ}}',
  'slack.help.flag': '• {flag} {allowed}{hasDefault, select, yes {（既定 {fallback}）} other {}}: {help}',
  'slack.help.make': '<b>画像を作る:</b> {example}',
  'slack.help.flags': 'フラグはテキストのどこに書いてもかまいません:',
  'slack.help.edit':
    '<b>画像を編集する:</b> 画像付きメッセージの ⋯ メニューから <b>Edit image</b> を選ぶ、{command} で最大 10 枚アップロードする、または画像付きのメッセージ（やスレッド）で私をメンションしてください: _@Pictor 空を紫にして_',
  'slack.help.progress': '進み具合は私が投稿するメッセージに表示され、画像はそのスレッドに <b>再生成</b> と <b>編集</b> ボタン付きで届きます。',
  'slack.help.usage': '<b>支出の確認:</b> {command}（今日、今月、予算の残り）',
  'slack.help.admins': '<b>ボット管理者:</b> {command}（user-daily、user-monthly、workspace-daily、workspace-monthly。運営者の設定に戻すには `clear`）',

  'slack.edit.title': '画像を編集',
  'slack.edit.editing': '{count} 枚の画像を編集中: {names}',
  'slack.edit.files': '画像（最大 {max} 枚）',
  'slack.edit.placeholder': '空を紫にして',
  'slack.edit.label': '{field, select, size {サイズ} quality {品質} background {背景} format {形式} other {枚数}}',
  'slack.edit.out_of_date': 'このフォームは古くなっています。閉じてから編集をやり直してください。',
  'slack.edit.say_what': '何を変えるか書いてください。',
  'slack.edit.pick_one': '{values} から選んでください。',
  'slack.edit.only_images': '編集できるのは PNG、JPEG、WebP の画像だけです。',
  'slack.edit.could_not_open': '編集フォームを開けませんでした。もう一度お試しください。',
  'slack.button.not_running': 'そのジョブはもう実行されていません。',
  'slack.button.only_requester_cancel': 'このジョブをキャンセルできるのは、開始した人か管理者だけです。',
  'slack.button.gone_reroll': 'そのジョブの詳細はもう保持していません。{command} で新しく始めてください。',
  'slack.button.gone_delete': 'そのジョブの詳細はもう保持していません。メッセージは Slack のメニューから削除してください。',
  'slack.button.only_requester_delete': 'このメッセージを削除できるのは {user} または管理者だけです。',
  'slack.button.could_not_delete': 'そのメッセージを削除できませんでした。もう一度お試しください。',
  'slack.button.gone_edit': 'そのジョブの画像はもう保持していません。代わりに画像のショートカット *Edit image* を使ってください。',
  'slack.mention.example': '@Pictor 空を紫にして --size 1536x1024',
  'slack.settings.not_admin': ':raised_hand: このワークスペースの設定を表示・変更できるのは管理者だけです。',
  'slack.settings.usage': '{how} と入力してください。SETTING は {names} のいずれかです。{show} ですべて表示できます。',
  'slack.budget.usage':
    '{how} と入力してください。CAP は user-daily、user-monthly、workspace-daily、workspace-monthly のいずれか、USD は 0 以上（例: 2.50）、運営者の設定に戻すには `clear` です。',
  'slack.history.line':
    '{rank}. {when}{author} {channel} で「{prompt}」 · {n} × {size, select, default {既定のサイズ} other {{size}}}、{quality, select, default {既定の品質} other {{quality}}} · {costKnown, select, yes {{cost}} other {{status, select, completed {完了} failed {失敗} other {キャンセル}}}}{hasLink, select, yes { · <{link}|メッセージ>} other {}}',
  'slack.home.usage_header': 'あなたの支出と予算',
  'slack.home.history_header': 'あなたの最近の画像',
  'slack.home.history_empty': 'まだありません。どのチャンネルでも {command} で最初の画像を作れます。',
  'slack.home.thumbnail': '「{prompt}」の画像',
  'slack.home.defaults_header': '何も指定しないときの設定',
  'slack.home.defaults':
    'サイズ {size}、品質 {quality}、描画中のプレビュー {previews, plural, =0 {なし} other {# 枚}}。ここでは 1 件のジョブで最大 {maxImages} 枚、品質 {qualities}、サイズ {sizes} を指定できます。',
  'slack.home.admin_header': 'このワークスペース（管理者のみ）',
  'slack.home.how': 'どのチャンネルでも {command} で画像を作成し、メッセージの ⋯ メニューの *Edit image* で編集するか、私をメンションしてください。このページはあなたにだけ表示されます。',
  'slack.step.bad_inputs': 'このステップには、プロンプト、チャンネル、実行対象の人が必要です。サイズ・品質・枚数は Pictor が受け付ける値にしてください。',
  'slack.step.cancelled': '画像のジョブは完了前に停止されました。',
  'slack.step.not_posted': '画像は作成されましたが、チャンネルに投稿できませんでした。',

  // House styles, role budgets and the audit channel
  'budget.role_set':
    '{scope, select, workspace {ユーザーグループ {role} のメンバー} other {ロール {role} を持つメンバー}}は、各ユーザーの予算の代わりに{period, select, day {1日} other {1か月}}あたりそれぞれ {usd} を使えるようになりました。複数持つメンバーには最も多い予算が適用されます（運営者の各ユーザーの上限: {operatorSet, select, yes {{operator}} other {なし}}）。',
  'budget.role_cleared':
    '{scope, select, workspace {ユーザーグループ {role}} other {ロール {role}}}の{period, select, day {1日} other {1か月}}の予算を解除しました。メンバーには、ほかの{scope, select, workspace {グループ} other {ロール}}に予算がない限り、各ユーザーの予算が再び適用されます。',
  'budget.role_member_caps_only':
    '{scope, select, workspace {ユーザーグループ} other {ロール}}の予算は各メンバーが使える金額です。user-daily か user-monthly を使ってください。',
  'budget.too_many_roles':
    '{scope, select, workspace {このワークスペース} other {このサーバー}}にはすでに上限の {max} 個の{scope, select, workspace {ユーザーグループ} other {ロール}}に予算があります。先にどれかを解除してください。',
  'usage.role_cap':
    '• あなたの{period, select, day {1日} other {1か月}}の予算{setBy, select, role {（{scope, select, workspace {ユーザーグループ} other {ロール}} {role} による）} other {}}: 残り {left} / {limit}（使用済み {spent}）、リセット: {reset}{setBy, select, unknown_roles {。いまはあなたの{scope, select, workspace {ユーザーグループ} other {ロール}}を読み取れなかったため、あなたに当てはまりうる最も少ない予算（{role} のもの）が適用されています。} other {}}',
  'usage.role_budgets':
    '<b>{scope, select, workspace {ユーザーグループ} other {ロール}}の予算</b>（各メンバーには、各ユーザーの予算の代わりに自分のものの中で最も多い予算が適用されます）:',
  'usage.role_budget':
    '• {role}: {hasDaily, select, yes {1日 {daily}} other {1日は各ユーザーの予算}} · {hasMonthly, select, yes {1か月 {monthly}} other {1か月は各ユーザーの予算}}',
  'discord.option.role':
    'ロール: そのメンバーには各ユーザーの予算の代わりにこの予算が適用されます（user-daily、user-monthly）',
  'slack.budget.group_usage':
    'ユーザーグループには {how} と入力します。そのメンバーそれぞれに、各ユーザーの予算の代わりにその予算が適用されます。',
  'slack.budget.unknown_group':
    'このワークスペースにユーザーグループ {group} が見つかりません{missingScope, select, yes {。アプリには usergroups:read スコープが必要です（マニフェストから再インストールしてください）} other {}}。',
  'refusal.style_unknown':
    '{count, plural, =0 {ここにはまだハウススタイルがないため、「{style}」は使えません。スタイルを外すか、管理者に定義を依頼してください。} other {ここにはハウススタイル「{style}」はありません。{styles} から選んでください。}}',
  'refusal.style_option_not_allowed': 'ハウススタイル「{style}」は {option} {value} を指定していますが、ここでは許可されていません。{option} を自分で指定するか、別のスタイルを選ぶか、管理者に変更を依頼してください。',
  'refusal.style_blocked_word': 'ハウススタイル「{style}」は、ここで禁止されている「{word}」を加えます。別のスタイルを選ぶか、管理者に変更を依頼してください。',
  'styles.title': '<b>ハウススタイル</b>（{count} 件、最大 {max} 件）。メンバーは {how} で選びます:',
  'styles.none': 'ハウススタイルはまだありません。管理者は {command} で定義できます。',
  'styles.line': '• {name}: 「{text}」{hasOptions, select, yes {（{options}）} other {}}',
  'styles.defined': 'ハウススタイル {name} を{replaced, select, yes {置き換えました} other {定義しました}}: 「{text}」{hasOptions, select, yes {（{options}）} other {}}。メンバーは {how} で選びます。',
  'styles.removed': 'ハウススタイル {name} を削除しました。これを指定したジョブは拒否されます。',
  'styles.unknown': 'ここにはハウススタイル {name} はありません。',
  'styles.invalid_name': 'スタイル名は小文字、数字、- または _ の 1〜32 文字です（例: neon-poster）。「{name}」は使えません。',
  'styles.invalid_text':
    'スタイルのテキストは最大 {max} 文字で、メンバーのプロンプトが入る位置に {placeholder} を 1 回まで置けます（例: 「neon-lit, {placeholder}, synthwave palette」）。{placeholder} のないテキストはプロンプトの後ろに付きます。',
  'styles.too_many': 'この{scope, select, workspace {ワークスペース} other {サーバー}}には既に上限の {max} 件のハウススタイルがあります。先に 1 つ削除してください。',
  'styles.not_admin': 'ハウススタイルを定義できるのはこの{scope, select, workspace {ワークスペース} other {サーバー}}の管理者だけです。',
  'styles.choice': '{name}: {text}',
  'styles.more': '…ほか {count} 件。',
  'discord.command.admin.styles': 'このサーバーのハウススタイルを一覧表示します',
  'discord.command.admin.style': 'メンバーが選べるハウススタイルを定義・置換します。text を clear にすると削除',
  'discord.option.style': 'このサーバーのハウススタイル：プロンプトの前後のテキストとオプション',
  'discord.option.style_name': 'スタイル名（小文字、数字、- または _）',
  'discord.option.style_text': 'プロンプトの前後のテキスト：前 {placeholder} 後。clear でスタイルを削除',
  'slack.help.style': '<b>ハウススタイル:</b> {flag} でこのワークスペースのスタイルをプロンプトに加えます。{command} で一覧を表示します。',
  'slack.flag.style_value': 'このワークスペースのハウススタイルの名前',
  'slack.styles.usage':
    '{how} と入力してください。NAME は小文字、数字、- または _、TEXT はプロンプトの前後に付くテキストで、{placeholder} がプロンプトの位置です。フラグでスタイルのオプションを設定し、{clear} で削除します。',
  // Private results and member defaults
  'refusal.private_not_allowed':
    '{scope, select, workspace {このワークスペース} other {このサーバー}}ではプライベートな結果は許可されていません{fromDefault, select, yes {。あなたの既定値がプライベートになっています。{platform, select, slack {--public} other {private: False}} で公開のジョブを依頼するか、{platform, select, slack {/imagine settings --private off} other {/imagine-settings private: False}} で既定値をオフにしてください} other {。{platform, select, slack {--private} other {private}} を付けずにもう一度依頼してください}}。',
  'settings.hint.onOff': '{on} または {off}',
  'member.ignored':
    '{scope, select, workspace {このワークスペース} other {このサーバー}}のルールで許可されていないため、ここでは使われませんでした（{count, plural, other {#件}}）：あなたの既定値 {defaults}。',
  'member.title': '<b>あなたの既定値</b>（Pictor を使うすべての場所で有効。{scope, select, workspace {ワークスペース} other {サーバー}}のルールで許可されていないものはそこでは使われません）',
  'member.none': '設定されていません：{scope, select, workspace {このワークスペース} other {このサーバー}}の既定値が使われます。',
  'member.line': '• {name}: {value}{ignored, select, yes { — ここでは許可されていないため使われません} refused { — ここでは許可されていません。公開のジョブを依頼しない限り、ここでのジョブは拒否されます} other {}}',
  'member.on_off': '{on, select, yes {オン} other {オフ}}',
  'member.scope':
    '<b>{scope, select, workspace {このワークスペース} other {このサーバー}}</b>（何も選ばない場合）：サイズ {size}、品質 {quality}、{previews, plural, =0 {プレビューなし} other {プレビュー #枚}}。1回のジョブで最大 {maxImages, plural, other {#枚}}。プライベートな結果は{privateResults, select, yes {許可されています} other {許可されていません}}。',
  'member.how': '{command} で変更できます。{clear} で1つ、またはすべてを消去します。',
  'member.saved': '既定値を保存しました。',
  'discord.command.settings.name': 'imagine-settings',
  'discord.command.settings.description': 'あなたの既定値：サイズ、品質、形式、枚数、プライベート、プレビュー。オプションなしで表示',
  'discord.option.private': 'ジョブと画像をあなただけに表示します（このサーバーが許可している場合）',
  'discord.option.default_private': '特に指定しない限り、ジョブをあなただけに表示します',
  'discord.option.default_previews': '画像の作成中にプレビューを表示します',
  'discord.option.clear': '既定値を1つ、またはすべて消去します',
  'discord.choice.clear': '{name, select, all {すべて} other {{name}}}',
  'slack.job.private_in_dm': ':lock: このジョブはあなただけに表示されます：ダイレクトメッセージで作成しています。',
  'slack.settings.on_off': '{flag} には on または off を指定してください。',
  'slack.help.private': '<b>自分だけに：</b>{private} はジョブをダイレクトメッセージであなただけに表示します。既定値がプライベートのとき、{public} はチャンネルに表示します。',
  'slack.help.settings': '<b>あなたの既定値：</b>{command}（サイズ、品質、形式、枚数、プライベート、プレビュー）。',
} as const satisfies Catalog;
