# Renders an animated Cycles shot as a sequence of multilayer EXRs, one a frame: Combined with
# the Vector (motion), Depth, Normal and DiffCol (albedo) passes, for temporal denoising.
# Usage: blender -b -noaudio --python make_sequence.py -- OUT_PREFIX SAMPLES WIDTH HEIGHT SHOT
#        [FIRST LAST] [SEED]
# writes OUT_PREFIX####.exr for the frames FIRST..LAST (default 1..8). SHOT picks the motion:
#   static   nothing moves; frames differ only in their samples (the seed changes a frame)
#   dolly    the camera dollies in and pans, a metal torus spins, a cube slides (up to ~11 px a
#            frame at 480x270)
#   orbit    the camera orbits the objects while a sphere bobs and the lamp moves (kept out of
#            any tuning: the shot to report on)
# SEED: "animated" (default: the sampling pattern changes every frame, as production renders
# do), "animated:N" (the same from base seed N: references whose samples are not the noisy
# frames' own) or a number (one pattern for every frame: the noise sticks to the screen).
# Motion blur is off, so Vector holds the motion of each pixel's surface to the previous frame
# (X, Y) and to the next (Z, W) in pixels (docs/temporal.md states the signs).
import bpy, sys, math
argv = sys.argv[sys.argv.index("--") + 1:]
prefix, spp, w, h, shot = argv[0], int(argv[1]), int(argv[2]), int(argv[3]), argv[4]
first = int(argv[5]) if len(argv) > 5 else 1
last = int(argv[6]) if len(argv) > 6 else 8
seed = argv[7] if len(argv) > 7 else "animated"
assert shot in ("static", "dolly", "orbit"), shot
bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
sc.render.engine = 'CYCLES'
sc.cycles.device = 'CPU'
sc.cycles.samples = spp
sc.cycles.use_denoising = False
animated = seed.split(":")[0] == "animated"
sc.cycles.use_animated_seed = animated
sc.cycles.seed = (int(seed.split(":")[1]) if ":" in seed else 7) if animated else int(seed)
sc.render.use_motion_blur = False
sc.render.resolution_x, sc.render.resolution_y = w, h
sc.render.resolution_percentage = 100
sc.frame_start, sc.frame_end = first, last
vl = sc.view_layers[0]
vl.use_pass_normal = True
vl.use_pass_z = True
vl.use_pass_vector = True
vl.use_pass_diffuse_color = True


def mat(name, color, rough=0.5, metal=0.0, checker=False, emit=0.0):
    m = bpy.data.materials.new(name)
    m.use_nodes = True
    b = m.node_tree.nodes["Principled BSDF"]
    b.inputs["Base Color"].default_value = (*color, 1)
    b.inputs["Roughness"].default_value = rough
    b.inputs["Metallic"].default_value = metal
    if emit:
        b.inputs["Emission"].default_value = (*color, 1)
        b.inputs["Emission Strength"].default_value = emit
    if checker:
        t = m.node_tree.nodes.new("ShaderNodeTexChecker")
        t.inputs["Scale"].default_value = 20
        t.inputs["Color1"].default_value = (0.8, 0.8, 0.75, 1)
        t.inputs["Color2"].default_value = (0.15, 0.15, 0.2, 1)
        m.node_tree.links.new(t.outputs["Color"], b.inputs["Base Color"])
    return m


def add(op, m, **kw):
    op(**kw)
    o = bpy.context.active_object
    o.data.materials.append(m)
    return o


def key(obj, frame, **values):
    for attr, value in values.items():
        setattr(obj, attr, value)
        obj.keyframe_insert(data_path=attr, frame=frame)


def linear(obj):
    """Constant speed between keys: motion vectors the same size every frame."""
    for curve in obj.animation_data.action.fcurves:
        for point in curve.keyframe_points:
            point.interpolation = 'LINEAR'


add(bpy.ops.mesh.primitive_plane_add, mat("floor", (0.8, 0.8, 0.8), checker=True), size=30)
add(bpy.ops.mesh.primitive_plane_add, mat("wall", (0.7, 0.3, 0.25)), size=30, location=(0, 6, 0),
    rotation=(math.pi / 2, 0, 0))
sphere = add(bpy.ops.mesh.primitive_uv_sphere_add, mat("gold", (1.0, 0.77, 0.35), rough=0.25,
             metal=1.0), radius=1.0, location=(1.8, 1.5, 1), segments=64, ring_count=32)
bpy.ops.object.shade_smooth()
torus = add(bpy.ops.mesh.primitive_torus_add, mat("steel", (0.8, 0.8, 0.85), rough=0.2, metal=1.0),
            location=(-1.6, 1.0, 0.8), major_radius=0.9, minor_radius=0.3,
            rotation=(math.pi / 2, 0, 0))
bpy.ops.object.shade_smooth()
cube = add(bpy.ops.mesh.primitive_cube_add, mat("blue", (0.1, 0.25, 0.8), rough=0.4), size=0.8,
           location=(-0.2, -0.5, 0.4))
add(bpy.ops.mesh.primitive_cylinder_add, mat("white", (0.85, 0.85, 0.8), rough=0.7), radius=0.5,
    depth=2.5, location=(-0.2, 3.0, 1.25))
lamp = add(bpy.ops.mesh.primitive_uv_sphere_add, mat("lamp", (1.0, 0.9, 0.7), emit=25.0),
           radius=0.3, location=(0.5, -0.5, 3.2))
bpy.ops.object.light_add(type='AREA', location=(-3, -3, 6))
light = bpy.context.active_object
light.data.energy = 900
light.data.size = 2.5
light.rotation_euler = (0.6, -0.4, 0)
world = bpy.data.worlds.new("w")
sc.world = world
world.use_nodes = True
world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.05, 0.06, 0.08, 1)
bpy.ops.object.camera_add(location=(3.5, -8.5, 4.2),
                          rotation=(math.radians(68), 0, math.radians(18)))
camera = bpy.context.active_object
camera.data.lens = 32
sc.camera = camera

frames = last - first
if shot == "dolly":
    key(camera, first, location=(3.5, -8.5, 4.2))
    key(camera, last, location=(3.5 - 0.06 * frames, -8.5 + 0.18 * frames, 4.2 - 0.025 * frames))
    key(camera, first, rotation_euler=(math.radians(68), 0, math.radians(18)))
    key(camera, last, rotation_euler=(math.radians(68), 0, math.radians(18 - 0.6 * frames)))
    key(torus, first, rotation_euler=(math.pi / 2, 0, 0))
    key(torus, last, rotation_euler=(math.pi / 2, 0, math.radians(9 * frames)))
    key(cube, first, location=(-0.2, -0.5, 0.4))
    key(cube, last, location=(-0.2 + 0.08 * frames, -0.5, 0.4))
    for obj in (camera, torus, cube):
        linear(obj)
elif shot == "orbit":
    for f in (first, last):
        a = math.radians(-25 + 50 * (f - first) / max(1, frames))
        key(camera, f, location=(9.4 * math.sin(a) + 0.2, -9.4 * math.cos(a) + 1.5, 4.2))
        key(camera, f, rotation_euler=(math.radians(68), 0, a))
    key(sphere, first, location=(1.8, 1.5, 1.0))
    key(sphere, last, location=(1.8, 1.5, 1.0 + 0.08 * frames))
    key(lamp, first, location=(0.5, -0.5, 3.2))
    key(lamp, last, location=(0.5 + 0.1 * frames, -0.5, 3.2))
    for obj in (camera, sphere, lamp):
        linear(obj)

sc.render.image_settings.file_format = 'OPEN_EXR_MULTILAYER'
sc.render.image_settings.color_depth = '32'
sc.render.image_settings.exr_codec = 'ZIP'
sc.render.filepath = prefix
bpy.ops.render.render(animation=True)
