import { Client, AttachmentBuilder } from 'discord.js';
import { FakeDiscord } from '../../fakes/discord/FakeDiscord.js';

const fake = await FakeDiscord.start({ heartbeatIntervalMs: 500 });
const client = new Client({ intents: [], rest: { api: fake.apiBaseUrl } });
client.on('debug', (m) => process.env.DEBUG && console.log('debug', m));
client.on('interactionCreate', async (i) => {
  if (!i.isChatInputCommand()) return;
  console.log('got', i.commandName, i.options.getString('prompt'), i.attachmentSizeLimit, i.options.getAttachment('image1')?.url);
  await i.deferReply();
  await i.editReply({ content: 'hello', files: [new AttachmentBuilder(Buffer.from('abc'), { name: 'a.png' })] });
  await i.editReply({ content: 'hello2', files: [new AttachmentBuilder(Buffer.from('abcd'), { name: 'b.png' })] });
});
const ready = new Promise((r) => client.once('clientReady', r));
await client.login(fake.botToken);
await ready;
console.log('ready as', client.user?.tag);
const att = fake.hostFile({ filename: 'x.png', bytes: Buffer.from('zz') });
const ix = fake.slashCommand('imagine', { prompt: 'a cat', image1: att });
const msg = await fake.waitFor(() => fake.original(ix)?.content === 'hello2' && fake.original(ix), 'edit');
console.log(msg.history.map((h) => [h.via, h.content, h.attachments.map((a) => a.filename)]));
console.log(fake.requests.map((r) => `${r.method} ${r.rawPath} ${r.status} ${r.files.map(f=>f.field).join(',')}`));
await new Promise((r) => setTimeout(r, 1200));
console.log(fake.gatewayStats);
await client.destroy();
await fake.close();
