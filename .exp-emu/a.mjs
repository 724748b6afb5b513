import sharp from 'sharp';
const w=1536,h=1024;
let shapes='';
for (let i=0;i<10;i++) shapes+=`<circle cx="${100+i*130}" cy="${200+(i*77)%600}" r="${60+i*10}" fill="hsl(${i*36},70%,50%)" fill-opacity="0.8"/><rect x="${i*140}" y="${(i*97)%800}" width="200" height="120" fill="hsl(${i*20},60%,40%)" transform="rotate(${i*7} ${i*140} 300)"/>`;
const svg=`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#223344"/><stop offset="1" stop-color="#ee8844"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/>${shapes}</svg>`;
for (let k=0;k<3;k++){
let t=Date.now();
const raw = await sharp(Buffer.from(svg)).ensureAlpha().raw().toBuffer({resolveWithObject:true});
console.log('svg', Date.now()-t, raw.info);
t=Date.now();
const png = await sharp(raw.data,{raw:raw.info}).removeAlpha().png().toBuffer(); console.log('png',Date.now()-t, png.length);
t=Date.now();
const jpg = await sharp(raw.data,{raw:raw.info}).jpeg({quality:90}).toBuffer(); console.log('jpg',Date.now()-t, jpg.length);
t=Date.now();
const webp = await sharp(raw.data,{raw:raw.info}).webp({quality:90}).toBuffer(); console.log('webp',Date.now()-t, webp.length);
t=Date.now();
const part = await sharp(raw.data,{raw:raw.info}).resize(48,32).raw().toBuffer({resolveWithObject:true});
const up = await sharp(part.data,{raw:part.info}).resize(w,h,{kernel:'nearest'}).png().toBuffer(); console.log('partial',Date.now()-t, up.length);
// webp padding test
const pad = Buffer.alloc(1000, 0x41);
const chunk = Buffer.concat([Buffer.from('PADD'), Buffer.from(new Uint32Array([pad.length]).buffer), pad]);
const padded = Buffer.concat([webp, chunk]); padded.writeUInt32LE(padded.length-8, 4);
try { console.log('webp padded', await sharp(padded).metadata().then(m=>[m.width,m.format]), (await sharp(padded).raw().toBuffer()).length); } catch(e){ console.log('webp pad fail', e.message) }
}
const fd = new FormData();
fd.append('image[]', new Blob([new Uint8Array([1,2])], {type:'application/octet-stream'}), 'a.bin');
fd.append('image[]', new Blob([new Uint8Array([1,2])]), 'b.bin');
fd.append('prompt', 'hi');
const r = new Request('http://x/', {method:'POST', body: fd});
console.log(r.headers.get('content-type'));
const text = await r.clone().text(); console.log(JSON.stringify(text));
const f2 = await r.formData(); for (const [k,v] of f2) console.log(k, typeof v, v.type, v.name);
