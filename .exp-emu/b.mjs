import sharp from 'sharp';
import zlib from 'node:zlib';
const img = await sharp({create:{width:64,height:64,channels:4,background:{r:255,g:0,b:0,alpha:0.5}}}).png().toBuffer();
const crc = (buf) => zlib.crc32 ? zlib.crc32(buf) : null;
console.log('zlib.crc32', typeof zlib.crc32);
const jpg = await sharp({create:{width:64,height:64,channels:3,background:'#f00'}}).jpeg().toBuffer();
// JPEG: insert COM after SOI
const segs=[]; let remaining=200000;
while(remaining>0){const len=Math.min(65533,remaining); const s=Buffer.alloc(4+len,0x20); s[0]=0xff;s[1]=0xfe;s.writeUInt16BE(len+2,2); segs.push(s); remaining-=len;}
const pj = Buffer.concat([jpg.subarray(0,2),...segs,jpg.subarray(2)]);
console.log(await sharp(pj).metadata().then(m=>[m.width,m.format]), (await sharp(pj).raw().toBuffer()).length, pj.length);
// webp noise
const t=Date.now(); const raw=await sharp({create:{width:1536,height:1024,channels:3,background:'#f00'}}).webp({effort:0}).toBuffer(); console.log('webp e0', Date.now()-t);
