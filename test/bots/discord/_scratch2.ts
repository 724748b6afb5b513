import { REST, Routes } from 'discord.js';
import { FakeDiscord } from '../../fakes/discord/FakeDiscord.js';
const fake = await FakeDiscord.start();
const rest = new REST({ api: fake.apiBaseUrl }).setToken(fake.botToken);
try {
  await rest.post(Routes.channelMessages(fake.channelId), { body: { content: 'x', attachments: [{ id: 0, filename: 'a.png' }] }, files: [{ name: 'a.png', data: Buffer.from('abc'), contentType: 'image/png' }] });
  console.log('ok buffer');
  await rest.post(Routes.channelMessages(fake.channelId), { body: { content: 'x', attachments: [{ id: 0, filename: 'a.png' }] }, files: [{ name: 'a.png', data: Buffer.alloc(100000, 1), contentType: 'image/png' }] });
  console.log('ok big buffer');
} catch (e) { console.log(e); }
await fake.close();
